// Display names for kernels and operators that keep their identity.
//
// GPU kernel names are C++ signatures hundreds of characters long; people read the function
// name. But many kernels share one function name and differ only in a template argument (13
// `at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>, ...>` variants in
// one ResNet step), so eliding every template argument makes different kernels read the same.
// The rule here: shorten a name to its function name only where that stays unique among the names
// shown together; where several names share a function name, add back the template arguments
// that tell them apart (as short as they can be while still telling them apart); where no
// template argument does, show the whole name. Memory activities (`Memcpy DtoD (Device ->
// Device)`, `Memset (Device)`) and names without brackets are never shortened.
//
// HTA's shorten_name (diff --short-names) deliberately merges template variants and lives in
// core/names/hta_short_name.h; this file is only about display.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sl {

class TraceStore;

// The function name alone: return type, template argument lists, parameter lists and
// "(anonymous namespace)::" dropped; memory names and names without '<' or '(' kept whole. May
// collide with other names: use ShortNames where names are shown side by side.
std::string base_short_name(std::string_view name);

// True for Memcpy/Memset activity names (CUDA and HIP), which are shown whole.
bool is_memory_name(std::string_view name);

// Short names for a set of full names, distinct whenever the full names are distinct.
class ShortNames {
public:
  ShortNames() = default;
  explicit ShortNames(const std::vector<std::string_view>& names);
  // The distinct short form of `full` when it was in the set, else base_short_name(full).
  std::string operator()(std::string_view full) const;
  size_t size() const { return by_full_.size(); }

private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  // Only the names whose distinct form is not their base short name (the few that collide).
  std::unordered_map<std::string, std::string, Hash, std::equal_to<>> by_full_;
};

// The short names of every slice name in `store`, distinct across the whole trace, so that a
// kernel reads the same in every view and table. Built on first use and cached per store (a
// store that grows, as in live capture, is rebuilt when its string count changes).
std::shared_ptr<const ShortNames> store_short_names(const TraceStore& store);

}  // namespace sl
