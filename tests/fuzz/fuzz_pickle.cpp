// libFuzzer target for PyTorch memory snapshots (core/import/memory_snapshot/): any bytes must
// give a memory-only store or a clean error (no crash, leak, hang or undefined behaviour), never
// run anything, and a store must answer the memory analyses. Inputs get the pickle header when
// they lack one, so mutations reach the opcodes rather than stop at the first byte.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/import/memory_snapshot/memory_snapshot_loader.h"
#include "core/memory/memory_analysis.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  if (size < 2 || uint8_t(bytes[0]) != 0x80) bytes.insert(0, "\x80\x04", 2);
  sl::LoadResult r = sl::read_memory_snapshot_bytes(bytes, "fuzz");
  if (!r.ok()) return 0;
  sl::memory::MemoryAnalysis a = sl::memory::analyze_memory(*r.store);
  (void)sl::memory::memory_findings(*r.store, a);
  return 0;
}
