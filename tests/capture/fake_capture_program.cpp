// Stands in for a CUDA program under `sightline capture` on machines without a GPU: writes the
// frames the injection library would (the synthetic capture of the unit tests) to
// $SIGHTLINE_CAPTURE_OUT. `--crash` stops mid-frame and aborts, like a program that dies.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>

#include "core/capture/live_protocol.h"
#include "tests/unit/capture_test_util.h"

int main(int argc, char** argv) {
  const char* path = std::getenv("SIGHTLINE_CAPTURE_OUT");
  if (!path) return 3;
  FILE* f = std::fopen(path, "wb");
  if (!f) return 4;
  bool crash = argc > 1 && std::strcmp(argv[1], "--crash") == 0;
  sl::capture::CaptureData d = sl::test::synthetic_capture();
  std::string out = sl::capture::encode_hello(d.info) + sl::capture::encode_devices(d.devices);
  std::span<const sl::capture::ActivityRecord> records(d.records);
  out += sl::capture::encode_records(records.first(12));
  std::string rest = sl::capture::encode_records(records.subspan(12));
  if (crash) {
    out += rest.substr(0, rest.size() / 2);
    std::fwrite(out.data(), 1, out.size(), f);
    std::fflush(f);
    std::abort();
  }
  out += rest + sl::capture::encode_stats(d.drops) + sl::capture::encode_end();
  std::fwrite(out.data(), 1, out.size(), f);
  std::fclose(f);
  return 0;
}
