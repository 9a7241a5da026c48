// Internal to the snapshot codec: the file layout that snapshot_writer.cpp writes and
// snapshot_reader.cpp and snapshot.cpp read (sections, their table, checksums, store access).
//
// Snapshot writer and reader (format: core/snapshot/SNAPSHOT.md).
//
// Every column is written as one aligned block and copied back, in cache-sized chunks summed for
// the section's checksum just before each is copied, into the store's std::vectors (the store
// owns its columns; using the mapped file in place needs another column type, a later refactor). Indexes built by finalize() are stored too, so opening
// runs no sort, nesting or linking. Args are the store's zstd blocks, stored as they are and
// mapped back, decoded only when asked for.
#pragma once

#include <libdeflate.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "core/store/trace_store.h"

namespace sl {

// (In an unnamed namespace even in this header: each file that includes it gets its own tags and
// instantiations, as an explicit instantiation may appear only once in a program.)
// --- access to the store's private indexes ---
// The store's derived indexes are private and only TraceBuilder is a friend. Rather than edit
// the widely included trace_store.h now, the snapshot codec reaches them through explicit
// template instantiation (which the language exempts from access checks). When the store moves
// to spans over mapped memory, replace this with a `friend` declaration.
namespace {
template <class Tag, auto Member>
struct MemberAccess {
  friend constexpr auto member_pointer(Tag) { return Member; }
};
#define SL_SNAPSHOT_ACCESS(TAG, MEMBER)                  \
  struct TAG {                                           \
    friend constexpr auto member_pointer(TAG);           \
  };                                                     \
  template struct MemberAccess<TAG, &TraceStore::MEMBER>;
SL_SNAPSHOT_ACCESS(ArgsTag, args_)
SL_SNAPSHOT_ACCESS(CorrActivitiesTag, correlation_activities_)
SL_SNAPSHOT_ACCESS(NameOffsetsTag, name_offsets_)
SL_SNAPSHOT_ACCESS(NameRefsTag, name_refs_)
SL_SNAPSHOT_ACCESS(FlowsByFromTag, flows_by_from_)
SL_SNAPSHOT_ACCESS(FlowsByToTag, flows_by_to_)
SL_SNAPSHOT_ACCESS(LaunchLinksTag, launch_links_)
SL_SNAPSHOT_ACCESS(GpuActivitiesTag, gpu_activities_)
SL_SNAPSHOT_ACCESS(KernelsTag, kernels_)
#undef SL_SNAPSHOT_ACCESS

template <class Tag>
auto& field(TraceStore& store) { return store.*member_pointer(Tag{}); }
template <class Tag>
const auto& field(const TraceStore& store) { return store.*member_pointer(Tag{}); }
}  // namespace

namespace snapshot_detail {

enum class SectionId : uint32_t {
  Strings = 1, Meta, Issues, Processes, Tracks, Counters, Flows, Iterations, Correlations,
  Indexes, Args, ArgBlocks, Memory,
};
constexpr uint32_t kSectionCount = 13;
constexpr size_t kHeaderBytes = 32;
constexpr size_t kEntryBytes = 32;
constexpr size_t kAlign = 64;  // sections start on cache lines
// One compressed args block in the args section's block table.
struct BlockEntry {
  uint64_t start;        // position of its first byte in the args text
  uint32_t raw_size;
  uint32_t stored_size;  // bytes of its zstd frame
  uint64_t at;           // where the frame starts in the arg blocks section
};
static_assert(sizeof(BlockEntry) == 24);

inline const char* section_name(uint32_t id) {
  static const char* names[] = {"?", "strings", "meta", "issues", "processes", "tracks", "counters",
                                "flows", "iterations", "correlations", "indexes", "args", "arg blocks", "memory"};
  return id <= kSectionCount ? names[id] : "?";
}

// CRC-32 (the zlib/gzip polynomial), by libdeflate: it uses carry-less multiplication where the
// CPU has it, several GB/s, so checking every section costs little of the open time.
inline uint32_t checksum(std::string_view bytes) {
  return libdeflate_crc32(0, bytes.data(), bytes.size());
}

template <class T>
T load_pod(std::string_view bytes, size_t at) {
  T v;
  std::memcpy(&v, bytes.data() + at, sizeof v);
  return v;
}
template <class T>
void store_pod(std::string& out, size_t at, const T& v) {
  std::memcpy(out.data() + at, &v, sizeof v);
}

}  // namespace snapshot_detail
}  // namespace sl
