// The args the Nsight loader writes on its events: their keys, and ArgsText, which gives them as
// fields to the store's args blocks, on the loading thread or a decoding one.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "core/store/args_blocks.h"
#include "core/store/trace_builder.h"

namespace sl::nsys_detail {

// ---------------------------------------------------------------- args

// The args keys the loader writes. Args are given as fields, not text: the store's args blocks
// keep them as compact records and write the same JSON text only when it is read (ArgsBlocks,
// "args given as fields"), so loading millions of rows neither formats nor compresses text.
enum ArgKey : uint8_t {
  kArgDevice, kArgContext, kArgStream, kArgCorrelation, kArgRegistersPerThread, kArgSharedMemory, kArgGrid,
  kArgBlock, kArgStaticSharedMemory, kArgDynamicSharedMemory, kArgLocalMemoryPerThread, kArgLocalMemoryTotal,
  kArgSharedMemoryExecuted, kArgGridId, kArgGraphNodeId, kArgLaunchType, kArgReturnValue, kArgBytes,
  kArgMemoryBandwidth, kArgValue, kArgCudaSyncKind, kArgCudaEvent, kArgGraphId, kArgGraphExecId, kArgDomain,
  kArgCategory, kArgColor, kArgPayload, kArgKeys
};
inline constexpr const char* kArgNames[kArgKeys] = {
    "device", "context", "stream", "correlation", "registers per thread", "shared memory", "grid", "block",
    "static shared memory", "dynamic shared memory", "local memory per thread", "local memory total",
    "shared memory executed", "grid id", "graph node id", "launch type", "return value", "bytes",
    "memory bandwidth (GB/s)", "value", "cuda_sync_kind", "cuda event", "graph id", "graph exec id", "domain",
    "category", "color", "payload"};

class ArgsText {
public:
  ArgsText(TraceStore& store, TraceBuilder& builder) : blocks_(store.args_blocks()), builder_(builder) {
    for (int k = 0; k < kArgKeys; ++k) ids_[k] = blocks_.key(kArgNames[k]);
  }
  ~ArgsText() { blocks_.seal(); }
  void begin() { blocks_.begin_record(); }
  uint32_t end() { return builder_.add_args_record(blocks_.end_record()); }
  void number(ArgKey k, int64_t v) { blocks_.add_int(ids_[k], v); }
  void real(ArgKey k, double v) { blocks_.add_real(ids_[k], v); }
  void text(ArgKey k, std::string_view v) { blocks_.add_text(ids_[k], v); }
  void triple(ArgKey k, int64_t a, int64_t b, int64_t c) { blocks_.add_triple(ids_[k], a, b, c); }
  // A record an ArgsRecordWriter wrote (on a decoding thread: Fields below).
  uint32_t append(std::string_view bytes, uint32_t fields, uint64_t text_size) {
    return builder_.add_args_record(blocks_.append_record(bytes, fields, text_size));
  }
  ArgsBlocks::RecordPlace last_record() const { return blocks_.last_record(); }
  // A repeat of the record at `base` (ArgsBlocks::append_repeat); kNone when it cannot be one.
  uint32_t append_repeat(ArgsBlocks::RecordPlace base, std::string_view bytes, uint32_t replaced, uint64_t text_size) {
    std::optional<ArgsRange> r = blocks_.append_repeat(base, bytes, replaced, text_size);
    return r ? builder_.add_args_record(*r) : kNone;
  }

  // The same calls as ArgsText's, into an ArgsRecordWriter: an encoding function of a row's args
  // (kernel_args, api_args) writes through either, on the loading thread or a decoding one.
  class Fields {
  public:
    Fields(const ArgsText& text, char* out) : writer_(text.blocks_.key_sizes(), out), ids_(text.ids_) {}
    [[gnu::always_inline]] void number(ArgKey k, int64_t v) { writer_.add_int(ids_[k], v); }
    [[gnu::always_inline]] void triple(ArgKey k, int64_t a, int64_t b, int64_t c) {
      writer_.add_triple(ids_[k], a, b, c);
    }
    const ArgsRecordWriter& writer() const { return writer_; }

  private:
    ArgsRecordWriter writer_;
    const uint8_t* ids_;
  };

private:
  ArgsBlocks& blocks_;
  TraceBuilder& builder_;
  uint8_t ids_[kArgKeys];
};

}  // namespace sl::nsys_detail
