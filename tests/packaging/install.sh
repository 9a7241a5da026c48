#!/usr/bin/env bash
# `cmake --install` into a temporary prefix, then the installed binary and `import sightline`
# from there (Debian's python3, nothing of the build tree on its path); then `cpack -G DEB` and
# the .deb's contents: /usr/bin, the package under usr/lib/python3/dist-packages (never
# usr/local), the desktop entry, icon and MIME types, Depends from dpkg-shlibdeps.
# Usage: install.sh BUILD_DIR VERSION PYTHON_VERSION (X.Y, or "" when the module is not built)
set -euo pipefail
build=$1 version=$2 python_version=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
sample_name=sample_bert_h100.json.gz

check_tree() {  # ROOT PYTHON_DIR: what an install puts under ROOT
  local root=$1 pydir=$2
  "$root/bin/sightline" --version | grep -qx "sightline $version" || fail "$root/bin/sightline --version does not say sightline $version"
  "$root/bin/sightline" --help | grep -q "Sightline $version" || fail "--help does not name the version"
  "$root/bin/sightline" info "$root/share/sightline/$sample_name" > /dev/null || fail "the installed binary cannot read the installed sample"
  local desktop=$root/share/applications/sightline.desktop
  [ -f "$desktop" ] || fail "no desktop entry under $root"
  for type in application/json application/gzip application/x-sightline-snapshot application/x-nsys-rep application/vnd.sqlite3; do
    grep -q "^MimeType=.*$type;" "$desktop" || fail "the desktop entry does not open $type"
  done
  grep -qx "Exec=sightline %F" "$desktop" || fail "the desktop entry does not run sightline on its files"
  [ -f "$root/share/icons/hicolor/scalable/apps/sightline.svg" ] || fail "no icon"
  grep -q 'glob pattern="\*.slsnap"' "$root/share/mime/packages/sightline.xml" || fail "no MIME type for .slsnap"
  [ -z "$python_version" ] && return 0
  [ -f "$root/$pydir/sightline/__init__.py" ] || fail "no Python package in $root/$pydir"
  (cd "$work" && env -u PYTHONHOME PYTHONPATH="$root/$pydir" PYTHONNOUSERSITE=1 SIGHTLINE_NO_CACHE=1 /usr/bin/python3 - "$root/$pydir" "$root/share/sightline/$sample_name" <<'PY'
import sys
import sightline
where, sample = sys.argv[1], sys.argv[2]
assert sightline.__file__.startswith(where), sightline.__file__
t = sightline.open(sample)
assert t.info()["kernels"] > 0 and len(t.report()["kernel_breakdown"]) > 0
PY
  ) || fail "import sightline from $root/$pydir"
}

cmake --install "$build" --prefix "$work/prefix" > "$work/install.log" || { cat "$work/install.log"; fail "cmake --install"; }
check_tree "$work/prefix" "lib/python$python_version/site-packages"
echo "ok: installed to a prefix"

cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/deb" > "$work/cpack.log" 2>&1 || { cat "$work/cpack.log"; fail "cpack -G DEB"; }
deb=$(ls "$work"/deb/*.deb)
dpkg-deb -c "$deb" > "$work/contents"
grep -q '\./usr/bin/sightline$' "$work/contents" || fail "the .deb has no usr/bin/sightline"
if grep -q 'usr/local' "$work/contents"; then fail "the .deb puts files under usr/local"; fi
if [ -n "$python_version" ]; then
  grep -q '\./usr/lib/python3/dist-packages/sightline/__init__\.py$' "$work/contents" || fail "the .deb's Python package is not in usr/lib/python3/dist-packages"
  grep -q '\./usr/lib/python3/dist-packages/sightline/_sightline\..*\.so$' "$work/contents" || fail "the .deb has no extension module"
fi
depends=$(dpkg-deb -f "$deb" Depends)
for dep in libc6 libcairo2 libstdc++6 fonts-dejavu-core; do
  [[ $depends == *"$dep"* ]] || fail "Depends ($depends) lacks $dep"
done
if [ -n "$python_version" ]; then [[ $depends == *python3-pandas* ]] || fail "Depends lacks python3-pandas"; fi
dpkg-deb -x "$deb" "$work/root"
check_tree "$work/root/usr" "lib/python3/dist-packages"
echo "ok: $(basename "$deb"): $(wc -l < "$work/contents") entries; Depends: $depends"
