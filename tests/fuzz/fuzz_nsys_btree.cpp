// libFuzzer target for the direct SQLite b-tree reader (core/import/nsys/nsys_btree.cpp) on its own: any
// bytes as a database image, each of the first pages tried as a table's root, every leaf decoded
// (on this thread and through the pipeline of two decoding threads), for integers only and for
// columns of every kind (TEXT and REAL as NVTX ranges ask, the rowid as StringIds' id). It must
// stop with a reason or finish, never read outside the image, loop or crash; text read stays
// inside its batch's bytes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/import/nsys/nsys_btree.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view image(reinterpret_cast<const char*>(data), size);
  for (int64_t root = 1; root <= 8; ++root) {
    // Wanted columns out of order, one repeated, one past any record: as the loader asks.
    sl::nsys::TableReader reader(image, "fuzz", root, {0, 1, 5, 2, -1, 40});
    if (!reader.open()) continue;
    using K = sl::nsys::ValueKind;
    for (bool mixed : {false, true}) {
      if (mixed) reader.select({0, 1, 5, 2, -1, 40}, {K::Rowid, K::Real, K::Text, K::Integer, K::Text, K::Real});
      sl::nsys::RowBatch batch;
      batch.columns = 6;
      reader.decode(0, reader.leaf_count(), batch);
      size_t text = 0;
      for (size_t i = 0; i < batch.rows(); ++i)
        for (int c = 0; c < 6; ++c) text += sl::nsys::BatchRow{&batch.values[i * 6], &batch.present[i * 6], &batch, i}.text(c).size();
      if (text > batch.text.size()) __builtin_trap();
      size_t rows = 0;
      sl::nsys::BackgroundDecoding two_threads;
      two_threads.threads = 2;
      sl::nsys::decode_in_background(reader, 6, 3, [&](const sl::nsys::RowBatch& b) {
        rows += b.rows();
        return true;
      }, two_threads);
    }
  }
  return 0;
}
