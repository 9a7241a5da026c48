// Opening a job from the CLI: a directory argument or `--job A B C ...`, with errors on stderr.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/job.h"

namespace sl::cli {

// Loads the job; on error prints "sightline: ERROR" and returns null. Failed ranks print a line
// each on stderr (the job still loads; callers exit 1 after printing their output).
std::unique_ptr<Job> open_job(const std::string& dir, const std::vector<std::string>& files);

}  // namespace sl::cli
