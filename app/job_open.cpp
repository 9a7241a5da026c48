#include "app/job_open.h"

#include <cstdio>

#include "core/import_issues.h"

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
  // A rank cut off after complete events loads (its events up to the cut); say so once per rank,
  // in the words of the single-trace warning, so a short rank is not mistaken for a straggler.
  for (const JobRank& r : result.job->ranks)
    if (r.ok() && r.store->issues.truncation)
      std::fprintf(stderr, "sightline: warning: rank %lld: %s: %s\n", (long long)r.rank, r.path.c_str(),
                   describe(*r.store->issues.truncation).c_str());
  return std::move(result.job);
}

}  // namespace sl::cli
