// libFuzzer target for snapshot files (core/snapshot/snapshot.cpp): any bytes must give a store or a clean
// error (no crash, leak or undefined behaviour), and a store must answer every query. Inputs
// whose first byte is odd are resealed first (sizes and checksums recomputed), so mutations
// reach the section readers and consistency checks instead of stopping at a checksum.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/snapshot/snapshot.h"
#include "tests/fuzz/exercise_store.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & 1) sl::reseal_snapshot(bytes);
  sl::LoadResult r = sl::read_snapshot_bytes(bytes, "fuzz");
  if (!r.ok()) return 0;
  sl::fuzz::exercise_store(*r.store);
  return 0;
}
