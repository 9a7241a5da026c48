// libFuzzer target: any bytes through the loader must give a store or a clean error, no crash,
// no leak, no undefined behaviour; and a loaded store must answer its queries.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/import/kineto/kineto_loader.h"
#include "tests/fuzz/exercise_store.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sl::LoadResult r = sl::load_trace_text(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
  if (!r.ok()) return 0;
  sl::fuzz::exercise_store(*r.store);
  return 0;
}
