// Display names that keep their identity (core/names/short_names.h): shortened only where they stay
// distinct, memory names whole.
#include <map>
#include <set>

#include "core/import/trace_loader.h"
#include "core/names/short_names.h"
#include "tests/unit/test_support.h"

using namespace sl;

namespace {

// The ResNet-50 elementwise kernels: one function name, different functors.
const char* kAdd =
    "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>, at::detail::Array<char*, 3> >"
    "(int, at::native::AddFunctor<float>, at::detail::Array<char*, 3>)";
const char* kFill =
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >"
    "(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)";
const char* kMulScalar =
    "void at::native::vectorized_elementwise_kernel<4, at::native::MulScalarFunctor<float, float>, "
    "at::detail::Array<char*, 2> >(int, at::native::MulScalarFunctor<float, float>, at::detail::Array<char*, 2>)";
const char* kClamp =
    "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::clamp_min_scalar_kernel_impl("
    "at::TensorIterator&, c10::Scalar)::{lambda()#1}::operator()() const::{lambda()#8}::operator()() const::"
    "{lambda(float)#1}, at::detail::Array<char*, 2> >(int, at::native::(anonymous namespace)::"
    "clamp_min_scalar_kernel_impl(at::TensorIterator&, c10::Scalar)::{lambda()#1}::operator()() const::"
    "{lambda()#8}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>)";
const char* kAddLong =
    "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<long>, at::detail::Array<char*, 3> >"
    "(int, at::native::AddFunctor<long>, at::detail::Array<char*, 3>)";

}  // namespace

TEST_CASE("base short names: function name only, memory names whole") {
  CHECK(base_short_name(kAdd) == "at::native::vectorized_elementwise_kernel");
  CHECK(base_short_name("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int)") ==
        "at::native::vectorized_layer_norm_kernel");
  CHECK(base_short_name("aten::mm") == "aten::mm");
  CHECK(base_short_name("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)") ==
        "ncclKernel_AllReduce_RING_LL_Sum_float");
  // Used to read "Device)": the '>' of "->" closed a bracket.
  CHECK(base_short_name("Memcpy DtoD (Device -> Device)") == "Memcpy DtoD (Device -> Device)");
  CHECK(base_short_name("Memset (Device)") == "Memset (Device)");
  CHECK(base_short_name("hipMemcpyAsync (Host -> Device)") == "hipMemcpyAsync (Host -> Device)");
  CHECK(base_short_name("void Foo<int>::bar(float) const") == "Foo::bar");
  CHECK(base_short_name("broken<(name") == "broken<(name");  // unbalanced: whole
  CHECK(base_short_name("") == "");
}

TEST_CASE("short names: a Python frame shows its function, <module> and <lambda> included") {
  // Were ":" and "train_ddp.py:": the frame's angle brackets were read as template arguments.
  CHECK(base_short_name("<string>(1): <module>") == "<module>");
  CHECK(base_short_name("train_ddp.py(12): <module>") == "<module>");
  CHECK(base_short_name("model.py(40): <lambda>") == "<lambda>");
  CHECK(base_short_name("multiprocessing/spawn.py(122): spawn_main") == "spawn_main");
  CHECK(base_short_name("torch/nn/modules/module.py(1501): _call_impl") == "_call_impl");
  // Two files' <module> frames stay apart (the whole names) when shown side by side.
  ShortNames names({"<string>(1): <module>", "train_ddp.py(12): <module>"});
  CHECK(names("<string>(1): <module>") != names("train_ddp.py(12): <module>"));
  CHECK(names("train_ddp.py(12): <module>").find("<module>") != std::string::npos);
}

TEST_CASE("short names of colliding kernels add the template argument that tells them apart") {
  ShortNames names({kAdd, kFill, kMulScalar, kClamp, "volta_sgemm_64x64_nt", "Memcpy DtoD (Device -> Device)"});
  CHECK(names(kAdd) == "at::native::vectorized_elementwise_kernel<AddFunctor>");
  CHECK(names(kFill) == "at::native::vectorized_elementwise_kernel<FillFunctor>");
  CHECK(names(kMulScalar) == "at::native::vectorized_elementwise_kernel<MulScalarFunctor>");
  CHECK(names(kClamp) == "at::native::vectorized_elementwise_kernel<clamp_min_scalar_kernel_impl>");
  CHECK(names("volta_sgemm_64x64_nt") == "volta_sgemm_64x64_nt");
  CHECK(names("Memcpy DtoD (Device -> Device)") == "Memcpy DtoD (Device -> Device)");
  // A name outside the set: its base short name.
  CHECK(names("void k<1>(int)") == "k");
}

TEST_CASE("short names: a lone kernel keeps the plain function name") {
  ShortNames names({kAdd, "volta_sgemm_64x64_nt"});
  CHECK(names(kAdd) == "at::native::vectorized_elementwise_kernel");
}

TEST_CASE("short names: the functor's own template argument when the functor name is shared") {
  ShortNames names({kAdd, kAddLong, kFill});
  CHECK(names(kAdd) == "at::native::vectorized_elementwise_kernel<AddFunctor<float>>");
  CHECK(names(kAddLong) == "at::native::vectorized_elementwise_kernel<AddFunctor<long>>");
  CHECK(names(kFill) == "at::native::vectorized_elementwise_kernel<FillFunctor<float>>");
}

TEST_CASE("short names: several positions when one does not tell them apart") {
  ShortNames names({"void gemm<float, 64>(int)", "void gemm<float, 128>(int)", "void gemm<half, 64>(int)"});
  CHECK(names("void gemm<float, 64>(int)") == "gemm<float, 64>");
  CHECK(names("void gemm<float, 128>(int)") == "gemm<float, 128>");
  CHECK(names("void gemm<half, 64>(int)") == "gemm<half, 64>");
}

TEST_CASE("short names: overloads that differ only in parameters stay whole") {
  ShortNames names({"void f<int>(float*)", "void f<int>(double*)", "f"});
  CHECK(names("void f<int>(float*)") == "void f<int>(float*)");
  CHECK(names("void f<int>(double*)") == "void f<int>(double*)");
  CHECK(names("f") == "f");
}

TEST_CASE("short names: a template-less name beside its templated variants") {
  ShortNames names({"k(int)", "void k<1>(int)", "void k<2>(int)"});
  CHECK(names("k(int)") == "k");
  CHECK(names("void k<1>(int)") == "k<1>");
  CHECK(names("void k<2>(int)") == "k<2>");
}

TEST_CASE("short names of a trace: every kernel distinct") {
  // Thirteen-ish variants, as on a ResNet step: no two rows may read the same.
  std::vector<std::string> kernels = {kAdd, kFill, kMulScalar, kClamp, kAddLong};
  std::string json = "[";
  for (size_t i = 0; i < kernels.size(); ++i) {
    std::string escaped;
    for (char c : kernels[i]) escaped += c == '"' ? std::string("\\\"") : std::string(1, c);
    json += std::string(i ? "," : "") + R"({"ph":"X","cat":"kernel","name":")" + escaped +
            R"(","pid":0,"tid":7,"ts":)" + std::to_string(i * 10) + R"(,"dur":5,"args":{"stream":7}})";
  }
  json += "]";
  auto s = test::load_ok(json);
  auto names = store_short_names(*s);
  std::set<std::string> seen;
  for (const auto& k : kernels) CHECK(seen.insert((*names)(k)).second);
  CHECK(store_short_names(*s) == names);  // cached
}

TEST_CASE("short names on the corpus: ResNet-50 kernels stay distinct") {
  if (!test::have_shared()) return;
  LoadResult r = load_trace((test::shared_dir() / "corpus" / "kin_resnet50_nw0_run1.json.gz").string());
  if (!r.ok()) {
    MESSAGE("skipped: kin_resnet50_nw0_run1 is not in the corpus");
    return;
  }
  auto s = std::move(r.store);
  auto names = store_short_names(*s);
  std::set<std::string_view> full;
  for (const Track& t : s->tracks)
    if (t.kind == TrackKind::GpuStream)
      for (StringId id : t.slices.name) full.insert(s->strings.view(id));
  std::set<std::string> shown;
  for (std::string_view f : full) shown.insert((*names)(f));
  CHECK(shown.size() == full.size());
  CHECK(shown.count("at::native::vectorized_elementwise_kernel<FillFunctor>") == 1);
}

TEST_CASE("short names: odd and random bracket soups never crash and stay distinct") {
  CHECK(base_short_name("  <x>") == "  <x>");
  CHECK(base_short_name("->") == "->");
  CHECK(base_short_name("a<>(") == "a<>(");
  CHECK(base_short_name("f()") == "f");
  // Deterministic pseudo-random names from a small alphabet of brackets, commas, spaces, colons.
  const std::string alphabet = "ab<>(),: -{}#";
  uint64_t state = 42;
  auto next = [&] { return state = state * 6364136223846793005ULL + 1442695040888963407ULL; };
  std::vector<std::string> names;
  for (int i = 0; i < 3000; ++i) {
    std::string n;
    for (size_t len = (next() >> 33) % 24; len-- > 0;) n += alphabet[(next() >> 33) % alphabet.size()];
    names.push_back(n);
  }
  std::vector<std::string_view> views(names.begin(), names.end());
  ShortNames shorten(views);
  std::map<std::string, std::string> owner;
  for (const std::string& n : names) {
    std::string s = shorten(n);
    auto [it, fresh] = owner.emplace(s, n);
    CHECK_MESSAGE((fresh || it->second == n), "'" << n << "' and '" << it->second << "' both read '" << s << "'");
  }
}
