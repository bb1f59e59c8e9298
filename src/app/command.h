// One subcommand of the phalanx command line, and the helpers every subcommand shares.
// app::Run (app.h) declares each Command's flags, parses the command line once and runs
// the Command that was given.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <string>

#include "api/status.h"
#include "config/types.h"
#include "framework/registry.h"

namespace phalanx::app {

class Command {
 public:
  virtual ~Command() = default;
  // Adds the subcommand and its flags to `app` (the flags bind to members of this object)
  // and returns it; Run is called when it was given.
  virtual CLI::App* Declare(CLI::App& app) = 0;
  // False for subcommands that schedule nothing (load, version): Run then gets an empty
  // registry, and out-of-tree plugin options are not applied.
  virtual bool Schedules() const { return true; }
  // Runs the parsed subcommand with the in-tree plus out-of-tree plugins. Returns the
  // process exit code (0 success, 1 error, 3 invariant violations found).
  virtual int Run(framework::Registry registry) = 0;
};
using CommandFactory = std::function<std::unique_ptr<Command>()>;

// Prints "phalanx: error: MSG" to stderr; returns exit code 1.
int Fail(const std::string& msg);

// The KubeSchedulerConfiguration at `path`, or upstream's defaults when `path` is empty.
// Errors as config::LoadConfiguration (file, field).
api::Status LoadConfigOrDefault(const std::string& path, config::KubeSchedulerConfiguration* cfg);

// Writes `content` to `path`. Errors: "PATH: cannot open for writing", "PATH: write failed".
api::Status WriteTextFile(const std::string& path, const std::string& content);

}  // namespace phalanx::app
