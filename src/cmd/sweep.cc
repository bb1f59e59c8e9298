#include "cmd/sweep.h"

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "replay/experiment.h"
#include "replay/report.h"

namespace phalanx::cmd {

namespace {

// `phalanx report merge`.
class ReportCommand : public app::Command {
 public:
  CLI::App* Declare(CLI::App& app) override {
    auto* c = app.add_subcommand("report", "Work with trace-replay result documents");
    c->require_subcommand(1);
    merge_ = c->add_subcommand(
        "merge", "Combine the --json documents of `simulate ... --shard i/N` into one experiment");
    merge_->add_option("shards", inputs_, "The shards' --json files (every index once)")
        ->required();
    merge_->add_option("--json", json_path_, "Write the merged document to this file");
    merge_->add_option("--report", report_path_, "Write the merged HTML report to this file");
    return c;
  }
  bool Schedules() const override { return false; }

  int Run(framework::Registry) override {
    if (json_path_.empty() && report_path_.empty()) {
      return app::Fail("report merge: give --json and/or --report for the merged result");
    }
    std::vector<nlohmann::json> docs;
    for (const auto& path : inputs_) {
      std::ifstream in(path);
      if (!in) return app::Fail(path + ": cannot read");
      std::stringstream text;
      text << in.rdbuf();
      nlohmann::json d = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
      if (d.is_discarded()) return app::Fail(path + ": not valid JSON");
      docs.push_back(std::move(d));
    }
    nlohmann::json merged;
    if (auto s = replay::MergeShardReports(docs, inputs_, &merged); !s.ok()) {
      return app::Fail(std::string(s.message()));
    }
    std::printf("%s", replay::FormatReportSummary(merged).c_str());
    if (!json_path_.empty()) {
      if (auto s = app::WriteTextFile(json_path_, merged.dump(1) + "\n"); !s.ok()) {
        return app::Fail(std::string(s.message()));
      }
      std::printf("results: %s\n", json_path_.c_str());
    }
    if (!report_path_.empty()) {
      if (auto s = app::WriteTextFile(report_path_, replay::RenderHtmlReport(merged)); !s.ok()) {
        return app::Fail(std::string(s.message()));
      }
      std::printf("report: %s\n", report_path_.c_str());
    }
    return 0;
  }

 private:
  CLI::App* merge_ = nullptr;
  std::vector<std::string> inputs_;
  std::string json_path_, report_path_;
};

// `phalanx sweep`: prints the Indexed Job.
class SweepCommand : public app::Command {
 public:
  CLI::App* Declare(CLI::App& app) override {
    auto* c = app.add_subcommand(
        "sweep",
        "Print a Kubernetes Indexed Job that runs the shards of a simulate experiment "
        "(arguments after --)");
    c->add_option("--shards", shards_, "Number of shards (Job completions)")->required();
    c->add_option("--image", image_, "Container image with the phalanx binary")->required();
    c->add_option(
        "--results-claim", results_claim_,
        "PersistentVolumeClaim mounted at /results for the shard files (default: emptyDir)");
    c->add_option("--data-claim", data_claim_, "PersistentVolumeClaim with the traces, at /data");
    c->add_option("--name", name_, "Job name");
    c->add_option("--namespace", namespace_, "Job namespace");
    c->add_option("args", args_, "simulate's arguments (after --)");
    return c;
  }
  bool Schedules() const override { return false; }

  int Run(framework::Registry) override {
    if (shards_ < 1) return app::Fail("sweep: --shards must be at least 1");
    if (args_.empty()) return app::Fail("sweep: give simulate's arguments after --");
    for (const auto& a : args_) {
      if (a == "--shard" || a.rfind("--shard=", 0) == 0 || a == "--json" ||
          a.rfind("--json=", 0) == 0) {
        return app::Fail("sweep: " + a + " is set by the Job for each shard; leave it out");
      }
    }
    std::printf("%s", replay::SweepJobManifest(name_, namespace_, image_, results_claim_,
                                               data_claim_, shards_, args_)
                          .c_str());
    return 0;
  }

 private:
  size_t shards_ = 0;
  std::string image_, results_claim_, data_claim_;
  std::string name_ = "phalanx-sweep", namespace_ = "default";
  std::vector<std::string> args_;
};

}  // namespace

std::unique_ptr<app::Command> NewReportCommand() { return std::make_unique<ReportCommand>(); }
std::unique_ptr<app::Command> NewSweepCommand() { return std::make_unique<SweepCommand>(); }

}  // namespace phalanx::cmd
