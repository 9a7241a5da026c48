// ArgsRange: where one event's args text lies in the store's args blocks (core/store/args_blocks.h);
// the store keeps one per args row, the blocks read and write them.
#pragma once

#include <cstdint>

namespace sl {

// Where an event's args live: a byte range of the store's args text (every args object, in the
// order they were added: file order for loaded traces), which is held in compressed blocks.
struct ArgsRange {
  uint64_t offset = 0;  // position in the args text
  uint32_t length = 0;
  uint32_t block = 0;   // the block of ArgsBlocks that holds it
};

}  // namespace sl
