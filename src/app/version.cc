// `phalanx version`: prints "phalanx <version>".
#include <cstdio>

#include "app/app.h"

namespace phalanx::app {

namespace {

constexpr const char* kVersion = "0.1.0";

class VersionCommand : public Command {
 public:
  CLI::App* Declare(CLI::App& app) override {
    return app.add_subcommand("version", "Print the version");
  }
  bool Schedules() const override { return false; }
  int Run(framework::Registry) override {
    std::printf("phalanx %s\n", kVersion);
    return 0;
  }
};

}  // namespace

std::unique_ptr<Command> NewVersionCommand() { return std::make_unique<VersionCommand>(); }

}  // namespace phalanx::app
