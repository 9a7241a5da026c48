// LoadError's one-line message, as every command prints it.
#include "core/store/load_result.h"

namespace sl {

std::string LoadError::to_string() const {
  std::string out = file + ": ";
  if (line) out += "byte " + std::to_string(byte_offset) + " (line " + std::to_string(line) + ", column " +
                   std::to_string(column) + "): ";
  return out + message;
}

}  // namespace sl
