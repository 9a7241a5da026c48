// libFuzzer target for Nsight Systems SQLite exports: any bytes, read as a database in memory,
// must give a store or a clean error (no crash, leak or undefined behaviour), and a loaded store
// must answer its queries and describe itself in `info`.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/import/nsys/nsys_loader.h"
#include "tests/fuzz/exercise_store.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sl::LoadResult r = sl::load_nsys_bytes(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
  if (!r.ok()) return 0;
  sl::fuzz::exercise_store(*r.store);
  return 0;
}
