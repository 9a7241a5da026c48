// Matching keys (core/names/matching_key.h, analyses.md §9): what changes from run to run
// without meaning another op is dropped, nothing else.
#include "core/names/matching_key.h"
#include "tests/unit/test_support.h"

using namespace sl;

TEST_CASE("matching key: object addresses") {
  // The two largest "deltas" of the xDiT Flux diff were this one call at two addresses.
  CHECK(matching_key("<built-in method cpu of Tensor object at 0x703a305e9e00>") ==
        "<built-in method cpu of Tensor object at 0x\u2026>");
  CHECK(matching_key("<built-in method cpu of Tensor object at 0x7028f79af840>") ==
        matching_key("<built-in method cpu of Tensor object at 0x703a305e9e00>"));
  CHECK(matching_key("<built-in method pop of dict object at 0x7f03c124d040>") ==
        "<built-in method pop of dict object at 0x\u2026>");
  // Bare pointers anywhere in the name, several of them.
  CHECK(matching_key("copy 0x7f00aa11bb22 -> 0X7F00AA11BB33") == "copy 0x\u2026 -> 0x\u2026");
  // Short hex constants are template arguments of a distinct kernel; a hex run inside a word is no address.
  CHECK(matching_key("void k<0x10>(int)") == "void k<0x10>(int)");
  CHECK(matching_key("Cijk_MT0x1234567_SN") == "Cijk_MT0x1234567_SN");
  CHECK(has_address("<built-in method cpu of Tensor object at 0x703a305e9e00>"));
  CHECK_FALSE(has_address("<built-in method cpu of Tensor object at 0x\u2026>"));
  CHECK_FALSE(has_address("void k<0x10>(int)"));
}

TEST_CASE("matching key: Python line numbers of the same file and function") {
  CHECK(matching_key("torch/nn/modules/module.py(1743): _call_impl") ==
        matching_key("torch/nn/modules/module.py(1755): _call_impl"));
  CHECK(matching_key("torch/nn/modules/module.py(1743): _call_impl") == "torch/nn/modules/module.py(\u2026): _call_impl");
  CHECK(matching_key("<string>(1): <module>") == "<string>(\u2026): <module>");
  // Another function or another file stays another op.
  CHECK(matching_key("module.py(1743): _call_impl") != matching_key("module.py(1743): _wrapped_call_impl"));
  CHECK(matching_key("module.py(1743): _call_impl") != matching_key("linear.py(1743): _call_impl"));
  // A C++ signature with a parameter list is not a Python frame.
  CHECK(matching_key("void f(12)") == "void f(12)");
  CHECK(matching_key("aten::mm") == "aten::mm");
}

TEST_CASE("matching key: step numbers") {
  CHECK(matching_key("ProfilerStep#12") == "ProfilerStep#*");
  CHECK(matching_key("ProfilerStep#7") == matching_key("ProfilerStep#1010"));
}

TEST_CASE("runtime call key: CUDA and HIP spell one call") {
  CHECK(runtime_call_key("cudaMemcpyAsync") == runtime_call_key("hipMemcpyAsync"));
  CHECK(runtime_call_key("cudaDeviceSynchronize") == "DeviceSynchronize");
  CHECK(runtime_call_key("hipDeviceSynchronize") == "DeviceSynchronize");
  CHECK(runtime_call_key("cuLaunchKernel") == "LaunchKernel");
  CHECK(runtime_call_key("aten::mm") == "aten::mm");
  CHECK(runtime_call_key("curand") == "curand");
}
