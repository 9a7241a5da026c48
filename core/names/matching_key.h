// Matching keys (analyses.md §9, Sightline mode): the form of a name under which two runs'
// events are compared. A name carries parts that change from run to run without meaning a
// different op: object addresses (`<built-in method cpu of Tensor object at 0x703a305e9e00>`),
// Python line numbers of the same file and function (`module.py(1743): _call_impl` after an
// edit above it reads `module.py(1755): _call_impl`) and step numbers (`ProfilerStep#12`). The
// key drops exactly those, so the same call in two runs has one key; what is left stays as the
// user wrote it, so the key doubles as the name a diff row prints.
#pragma once

#include <string>
#include <string_view>

namespace sl {

// `… at 0x…` for every `0x` + hex digits; `file.py(…): function` for a Python frame;
// `ProfilerStep#*` for a numbered step. Any other name is returned unchanged.
std::string matching_key(std::string_view name);

// True when the name holds an object address (`0x` followed by a hex digit).
bool has_address(std::string_view name);

// The GPU runtime call, vendor prefix dropped (`cudaMemcpyAsync`, `hipMemcpyAsync` →
// `MemcpyAsync`; `cuLaunchKernel` → `LaunchKernel`), for calls that launch nothing; the same call
// of CUDA and HIP then matches. Names of other events are returned unchanged.
std::string runtime_call_key(std::string_view name);

}  // namespace sl
