#include "app/job_open.h"

#include <cstdio>

namespace sl::cli {

std::unique_ptr<Job> open_job(const std::string& dir, const std::vector<std::string>& files) {
  JobPlan plan = files.empty() ? plan_job_dir(dir) : plan_job_files(files);
  JobResult result = load_job(plan);
  if (!result.ok()) {
    std::fprintf(stderr, "sightline: %s\n", result.error.c_str());
    return nullptr;
  }
  for (const JobRank& r : result.job->ranks)
    if (!r.ok()) std::fprintf(stderr, "sightline: rank %lld failed: %s\n", (long long)r.rank, r.error.to_string().c_str());
  return std::move(result.job);
}

}  // namespace sl::cli
