// How many threads a piece of work may use: the cores this process may run on (its CPU affinity,
// as taskset or a container sets it), or SIGHTLINE_THREADS when set to a positive number. A fleet
// map task sets SIGHTLINE_THREADS=1: Dask runs as many tasks at once as a worker has threads, so
// a task that spread over every core would make more workers no faster, only contended.
#pragma once

namespace sl {

// At least 1; read once per process.
unsigned usable_cores();

// What usable_cores() answers for a SIGHTLINE_THREADS of `forced` (null: unset). Anything but a
// positive decimal number is ignored.
unsigned usable_cores_given(const char* forced);

}  // namespace sl
