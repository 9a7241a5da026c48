"""PNG decoding for the GUI tests (the same decoder as test_timeline.py, importable without running tests)."""
import json
import os
import shutil
import subprocess
import tempfile
import struct
import zlib


def read_png(path):
    """Decodes the 8-bit RGB/RGBA non-interlaced PNGs the app writes: (width, height, rows)."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            channels = {2: 3, 6: 4}[color]
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, stride, rows, prev = zlib.decompress(idat), width * channels, [], bytearray(width * channels)
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b, c = prev[i], prev[i - channels] if i >= channels else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[i:i + 3]) for i in range(0, stride, channels)])
        prev = line
    return width, height, rows


# What every end-to-end test script shares: where things are, and how a check is recorded.
_here = os.path.dirname(os.path.abspath(__file__))
SIGHTLINE = os.environ.get("SIGHTLINE", "")
DATA = os.path.join(_here, "..", "data")
SAMPLE = os.path.join(_here, "..", "..", "assets", "sample_bert_h100.json.gz")
SHARED = os.path.join(_here, "..", "..", "..", "shared", "corpus")
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)


def sample_stream7_window(plot_px, min_px):
    """The sample trace's stream 7, from the JSON alone: (events, origin, window, slices) where
    window is the first 200 µs (a, b) holding at least 5 slices, each at least `min_px` wide when
    the window spans `plot_px` px, and slices are those (start_us, dur_us) overlapping it; times
    relative to the trace's earliest timestamp. window is None when there is no such window."""
    import gzip
    import json
    events = json.load(gzip.open(SAMPLE))["traceEvents"]
    origin = min(e["ts"] for e in events if "ts" in e and e.get("ph") != "M")
    stream7 = [(e["ts"] - origin, e["dur"]) for e in events if e.get("ph") == "X" and e.get("tid") == 7]
    for start_us in range(900, 4800, 10):
        a, b = start_us, start_us + 200
        hits = [(s, d) for s, d in stream7 if s < b and s + d > a]
        visible = [min(s + d, b) - max(s, a) for s, d in hits]
        if len(hits) >= 5 and min(visible) * plot_px / 200 >= min_px:
            return events, origin, (a, b), hits
    return events, origin, None, []


def run_app(trace, lines, keep_as=None, size="1600x1000", wait=2):
    """Runs the script `lines` on `trace` in the real app, then lets `wait` frames draw and dumps a
    screenshot and the state: (state, (width, height, rows)), or (None, None) after a recorded
    failure. `keep_as`: a path to copy the screenshot to."""
    with tempfile.TemporaryDirectory() as tmp:
        script, png, state = (os.path.join(tmp, n) for n in ("s.txt", "s.png", "s.json"))
        with open(script, "w") as f:
            f.write("\n".join(lines + [f"wait {wait}", f"screenshot {png}", f"state {state}", "quit"]) + "\n")
        p = subprocess.run([SIGHTLINE, trace, "--script", script, "--size", size], capture_output=True, text=True, timeout=180)
        if p.returncode != 0:
            check(False, f"{os.path.basename(trace)} {lines}: exit {p.returncode}: {p.stderr.strip()}")
            return None, None
        if keep_as:
            shutil.copy(png, keep_as)
        return json.load(open(state)), read_png(png)


def check_script_errors(trace, cases):
    """Each (script text, exit code) run on `trace`: the app must exit with that code and say why
    on a `sightline: script:` line (bad commands are clear errors, never crashes)."""
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "s.txt")
        for bad, code in cases:
            with open(script, "w") as f:
                f.write(bad + "\n")
            p = subprocess.run([SIGHTLINE, trace, "--script", script], capture_output=True, text=True, timeout=60)
            check(p.returncode == code and "sightline: script:" in p.stderr, f"'{bad}': exit {p.returncode}, {p.stderr.strip()}")
