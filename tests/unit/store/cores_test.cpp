// usable_cores (core/store/cores.h): the process's cores, or SIGHTLINE_THREADS when it is a
// positive number (a fleet map task runs with 1).
#include <doctest/doctest.h>

#include <sched.h>

#include <thread>

#include "core/store/cores.h"

namespace sl {
namespace {

TEST_CASE("usable cores: SIGHTLINE_THREADS when a positive number, else the cores this process may use") {
  cpu_set_t set;
  REQUIRE(sched_getaffinity(0, sizeof set, &set) == 0);
  const unsigned mine = std::min(std::max(1u, std::thread::hardware_concurrency()), unsigned(CPU_COUNT(&set)));
  CHECK(usable_cores_given(nullptr) == mine);
  CHECK(usable_cores_given("1") == 1);
  CHECK(usable_cores_given("12") == 12);
  CHECK(usable_cores_given("0") == mine);
  CHECK(usable_cores_given("-3") == mine);
  CHECK(usable_cores_given("2x") == mine);
  CHECK(usable_cores_given("") == mine);
  CHECK(usable_cores_given("99999") == 1024);
}

}  // namespace
}  // namespace sl
