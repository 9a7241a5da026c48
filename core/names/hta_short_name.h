// HTA's shorten_name (`diff --short-names`, the fusion insight's chain ends): it merges template
// variants on purpose, unlike the display names of core/names/short_names.h.
#pragma once

#include <string>
#include <string_view>

namespace sl {

// HTA's shorten_name: drop "->", remove balanced <...> and (...), keep the last space-separated
// token; names without '<' or '(' and memory activities (Memcpy/Memset) are kept whole.
std::string hta_short_name(std::string_view name);

}  // namespace sl
