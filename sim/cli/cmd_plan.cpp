// `fleetsim plan FILE`: the capacity plan and its reports.
#include <cstdio>
#include <filesystem>

#include "cli/commands.h"
#include "plan/plan.h"
#include "report/plan_report.h"
#include "report/report.h"
#include "scenario/plan_loader.h"

namespace fleetsim {

// `fleetsim plan FILE`: plan.json, report.md, report.html in --out; the table on stdout.
int cmd_plan(const PlanCli& o) {
  LoadOptions opt;
  opt.max_gpus = o.max_gpus;
  opt.max_plan_candidates = o.max_candidates;
  o.limits.apply(&opt);
  const PlanSpec plan = load_plan(o.file, opt);
  std::string out_dir = o.out_dir;
  if (out_dir.empty()) out_dir = "out/plan-" + plan.name;
  std::filesystem::create_directories(out_dir);
  Progress progress = command_progress(o.progress, "plan " + plan.name, "candidates");
  const PlanResult r = run_plan(plan, opt, o.threads, &progress);
  write_file_atomic(out_dir + "/plan.json", plan_json(r));
  write_file_atomic(out_dir + "/report.md", plan_markdown(r));
  write_file_atomic(out_dir + "/report.html", plan_html(r));
  std::fputs(plan_table(r).c_str(), stdout);
  std::printf("wrote %s/plan.json, report.md, report.html\n", out_dir.c_str());
  return 0;
}

}  // namespace fleetsim
