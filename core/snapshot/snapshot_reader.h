// Internal to the snapshot reader: what snapshot.cpp (the header, the table, the checks) and
// snapshot_reader.cpp (the sections' contents) share.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/snapshot/snapshot_format.h"
#include "core/store/trace_store.h"

namespace sl::snapshot_detail {

struct SnapshotError : std::runtime_error {
  uint64_t offset;
  SnapshotError(const std::string& what, uint64_t at) : std::runtime_error(what), offset(at) {}
};

// What reading one section leaves for a later one: the args section's block table, used when
// the arg blocks section is read.
struct ReadState {
  int fd = -1;  // the open snapshot file, or -1 when reading bytes in memory
  std::vector<BlockEntry> blocks;
};

struct SectionEntry {
  uint32_t id, crc;
  uint64_t offset, size;
};

// Defined in snapshot_reader.cpp.
void read_sections(std::string_view file, std::span<const SectionEntry> entries, TraceStore& store, ReadState& state, int fd);

}  // namespace sl::snapshot_detail
