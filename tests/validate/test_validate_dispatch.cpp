// `fleetsim validate` on dispatch benchmark rows (validate_dispatch.h): detection by columns,
// the bandwidth definitions, malformed cells, skips, and the committed rows' MAPE per library.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

#include "coll/dispatch.h"
#include "core/error.h"
#include "support/fixtures.h"
#include "validate/validate.h"

using namespace fleetsim;
using namespace fleetsim::test;

namespace {

const char* kHeader =
    "source_url,hardware,library,mode,op,dtype,ranks,gpus_per_node,tokens_per_rank,hidden,top_k,"
    "experts,metric_name,bw_def,metric_value,notes\n";

ValidationReport run(const std::string& name, const std::string& body,
                     const char* header = kHeader) {
  const ScratchFile f("dispatch_" + name + ".csv", header + body);
  return validate_reference(f.path, kRoot, {});
}

}  // namespace

TEST_CASE("validate dispatch: time and bandwidth of one call under each bw_def") {
  // HybridEP on 8 B200 (one node), FP8, 4096 tokens, 64 experts: the same call as a time and
  // as bandwidths under the definitions; the bandwidth is the counted bytes over the time.
  const std::string call = "x,B200,hybridep,normal,dispatch,fp8,8,8,4096,7168,8,64,";
  const ValidationReport r =
      run("defs", call + "time_us,,300,api=kernel sms=16\n" + call +
                      "bandwidth_gbps,rank_copies,600,api=kernel sms=16\n" + call +
                      "bandwidth_gbps,logical,600,api=kernel sms=16\n");
  REQUIRE(r.dispatch);
  REQUIRE(r.n_rows == 3);
  const double t_us = r.rows[0].predicted;
  // rank_copies: 8 ranks × 4096 tokens × (1 − C(56,8)/C(64,8)) copies of 7392 B.
  const double recv = 8 * 4096 * 0.6790689102 * 7392;
  CHECK(r.rows[1].predicted == Approx(recv / (t_us * 1e-6) * 1e-9).epsilon(1e-6));
  // logical: tokens × min(ranks, top_k) × bytes.
  CHECK(r.rows[2].predicted == Approx(4096 * 8 * 7392 / (t_us * 1e-6) * 1e-9).epsilon(1e-6));
  CHECK(r.rows[0].system == "dgx-b200");
  CHECK(r.mape_by_group.count("hybridep time_us") == 1);
  CHECK(r.mape_by_group.count("hybridep bandwidth_gbps") == 1);
}

TEST_CASE("validate dispatch: AWS rows run on the AWS instance and are grouped as EFA") {
  const ValidationReport r =
      run("efa",
          "x,\"H200 (AWS p5en, 16x200Gb/s EFA)\",uccl-ep,normal,dispatch,fp8,16,8,4096,7168,8,"
          "288,time_us,,1196,api=torch routing=uniform\n");
  REQUIRE(r.n_rows == 1);
  CHECK(r.rows[0].system == "p5en.48xlarge");
  CHECK(r.mape_by_group.count("uccl-ep time_us EFA") == 1);
}

TEST_CASE("validate dispatch: malformed cells are errors with the column, placements skips") {
  const ValidationReport r =
      run("bad",
          "x,B200,deepx,normal,dispatch,fp8,8,8,4096,7168,8,64,time_us,,300,\n"      // library
          "x,B200,deepep,fast,dispatch,fp8,8,8,4096,7168,8,64,time_us,,300,\n"       // mode
          "x,B200,deepep,normal,dispatch,fp4,8,8,4096,7168,8,64,time_us,,300,\n"     // dtype
          "x,B200,deepep,normal,dispatch,fp8,8,8,4096,7168,8,63,time_us,,300,\n"     // experts
          "x,B200,deepep,normal,dispatch,fp8,8,8,4096,7168,8,64,time_us,,-3,\n"      // value
          "x,B200,deepep,normal,dispatch,fp8,8,8,4096,7168,8,64,latency,,3,\n"       // metric
          "x,B200,deepep,normal,dispatch,fp8,8,8,4096,7168,8,64,time_us,,3,sms=0\n"  // sms
          "x,B200,deepep,normal,dispatch,fp8,8,4,4096,7168,8,64,time_us,,300,\n"     // 4 GPUs/node
          "x,A100,deepep,normal,dispatch,fp8,8,8,4096,7168,8,64,time_us,,300,\n"     // no system
          "x,B200,deepep,normal,dispatch,fp8,8,8,4096,7168,8,64,bandwidth_gbps,bytes,300,\n");
  REQUIRE(r.rows.size() == 10);
  CHECK(r.n_errors == 8);
  CHECK(r.rows[0].reason.find("column 'library'") != std::string::npos);
  CHECK(r.rows[1].reason.find("column 'mode'") != std::string::npos);
  CHECK(r.rows[2].reason.find("column 'dtype'") != std::string::npos);
  CHECK(r.rows[3].reason.find("multiple of ranks") != std::string::npos);
  CHECK(r.rows[4].reason.find("column 'metric_value'") != std::string::npos);
  CHECK(r.rows[5].reason.find("column 'metric_name'") != std::string::npos);
  CHECK(r.rows[6].reason.find("notes 'sms'") != std::string::npos);
  CHECK(r.rows[0].line == 2);
  CHECK(r.n_skipped == 2);
  CHECK(r.rows[7].reason.find("GPUs per node") != std::string::npos);
  CHECK(r.rows[8].skipped);
  CHECK(r.rows[9].reason.find("column 'bw_def'") != std::string::npos);
  CHECK_THROWS_AS(run("column", "", "source_url,hardware,library,mode,op,dtype,ranks\n"),
                  InputError);
}

TEST_CASE("validate dispatch: the committed rows, MAPE per library") {
  const ValidationReport r =
      validate_reference(kRoot + "/validation/dispatch-benchmarks.csv", kRoot);
  CHECK(r.n_errors == 0);
  CHECK(r.n_skipped == 0);
  CHECK(r.n_rows == 419);
  // docs/validation.md "Dispatch benchmark rows": the figures these bounds guard.
  for (const char* g : {"deepep bandwidth_gbps", "hybridep bandwidth_gbps",
                        "nvlink-one-sided time_us", "nvlink-one-sided bandwidth_gbps"}) {
    INFO(g);
    REQUIRE(r.mape_by_group.count(g) == 1);
    CHECK(r.mape_by_group.at(g).first <= 20.0);
  }
  // EFA (UCCL-EP on p5en and p6-b200), listed separately; p5en's normal combine at EP 16-32 is
  // the known outlier (out of the fit, in these figures).
  for (const char* g : {"uccl-ep time_us EFA", "uccl-ep bandwidth_gbps EFA"}) {
    INFO(g);
    REQUIRE(r.mape_by_group.count(g) == 1);
    CHECK(r.mape_by_group.at(g).first <= 20.0);
  }
}
