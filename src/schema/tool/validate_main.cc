// phalanx-validate: checks objects or patches against the schemas kube-apiserver v1.36
// serves (../shared/upstream/openapi-v3-v1.36) and the gang schedulers' CRDs
// (../shared/upstream/crds), with src/schema/schema.h.
//
//   phalanx-validate [--upstream DIR] [--openapi DIR]... [--crds DIR]... [--gvk G/V/K]
//                    [--as object|merge-patch|strategic-merge-patch] [--base FILE] FILE...
//   phalanx-validate --list-fields G/V/K
//
// FILE is JSON or YAML ("-": JSON on stdin); a JSON array, a multi-document YAML file or
// a *List object is checked item by item. The group/version/kind comes from each object's
// apiVersion and kind unless --gvk names it (a patch carries neither). With --base, FILE
// is a merge patch: it is checked, applied to the base object and the result checked as a
// whole object. Prints one line per violation ("FILE: PATH: MESSAGE") and a summary line;
// exit status 0 when every body is valid, 1 when one is not, 2 on a usage or load error.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <string>

#include "schema/schema.h"

using phalanx::schema::GroupVersionKind;
using phalanx::schema::SchemaSet;
using phalanx::schema::WriteKind;

namespace {

// Loads every OpenAPI v3 document directory and CRD directory into `set`. Errors: the
// first directory that cannot be read or parsed (SchemaSet::AddOpenApiDir / AddCrdDir).
absl::Status LoadSchemas(const std::vector<std::string>& openapi_dirs,
                         const std::vector<std::string>& crd_dirs, SchemaSet* set) {
  for (const auto& d : openapi_dirs) {
    if (auto s = set->AddOpenApiDir(d); !s.ok()) return s;
  }
  for (const auto& d : crd_dirs) {
    if (auto s = set->AddCrdDir(d); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// The bodies of FILE `f` ("-": JSON on stdin): a JSON array or a *List object item by
// item, else the document itself. Errors: InvalidArgument for JSON stdin that does not
// parse ("stdin: ..."), ReadJsonOrYaml's error for a file.
absl::Status ReadBodies(const std::string& f, std::vector<nlohmann::json>* items) {
  nlohmann::json doc;
  if (f == "-") {
    try {
      // Read whole, then parse: parsing straight from the stream's iterators spun at 100 %
      // CPU on `phalanx-validate - < FILE`.
      const std::string text{std::istreambuf_iterator<char>(std::cin),
                             std::istreambuf_iterator<char>()};
      doc = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
      return absl::InvalidArgumentError(std::string("stdin: ") + e.what());
    }
  } else {
    auto d = phalanx::schema::ReadJsonOrYaml(f);
    if (!d.ok()) return d.status();
    doc = *std::move(d);
  }
  if (doc.is_array()) {
    items->assign(doc.begin(), doc.end());
  } else if (doc.is_object() && doc.value("kind", "").ends_with("List") && doc.contains("items")) {
    for (const auto& i : doc["items"]) items->push_back(i);
  } else {
    items->push_back(std::move(doc));
  }
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Validates Kubernetes objects and patches against the 1.36 OpenAPI documents "
      "and the gang schedulers' CRD schemas."};
  std::string upstream;
  if (const char* e = std::getenv("PHALANX_UPSTREAM_DIR")) upstream = e;
#ifdef PHALANX_DEFAULT_UPSTREAM_DIR
  if (upstream.empty()) upstream = PHALANX_DEFAULT_UPSTREAM_DIR;
#endif
  std::vector<std::string> openapi_dirs, crd_dirs, files;
  std::string gvk_text, as = "object", base_file;
  app.add_option("--upstream", upstream,
                 "directory laid out as ../shared/upstream (openapi-v3-v1.36/, crds/); "
                 "default $PHALANX_UPSTREAM_DIR or the source tree's ../shared/upstream");
  app.add_option("--openapi", openapi_dirs,
                 "OpenAPI v3 document directory (instead of --upstream)");
  app.add_option("--crds", crd_dirs, "CRD directory (instead of --upstream)");
  app.add_option("--gvk", gvk_text, "group/version/Kind to validate as (v1/Pod for core)");
  app.add_option("--as", as, "object | merge-patch | strategic-merge-patch")
      ->check(CLI::IsMember({"object", "merge-patch", "strategic-merge-patch"}));
  app.add_option("--base", base_file, "object a merge patch applies to (checks the result too)");
  std::string list_fields;
  app.add_option("--list-fields", list_fields,
                 "print the field paths the schema of G/V/K defines, one per line, and exit");
  app.add_option("files", files, "objects or patches (JSON or YAML; - for stdin)");
  CLI11_PARSE(app, argc, argv);

  SchemaSet set;
  if (openapi_dirs.empty() && crd_dirs.empty()) {
    openapi_dirs.push_back(upstream + "/openapi-v3-v1.36");
    crd_dirs.push_back(upstream + "/crds");
  }
  if (auto st = LoadSchemas(openapi_dirs, crd_dirs, &set); !st.ok()) {
    std::cerr << "phalanx-validate: " << st.message() << "\n";
    return 2;
  }
  if (!list_fields.empty()) {
    auto g = GroupVersionKind::Parse(list_fields);
    if (!g.ok() || !set.Has(*g)) {
      std::cerr << "phalanx-validate: no schema for " << list_fields << "\n";
      return 2;
    }
    for (const auto& p : set.FieldPaths(*g)) std::cout << p << "\n";
    return 0;
  }
  if (files.empty()) {
    std::cerr << "phalanx-validate: no FILE given\n";
    return 2;
  }
  std::optional<GroupVersionKind> forced;
  if (!gvk_text.empty()) {
    auto g = GroupVersionKind::Parse(gvk_text);
    if (!g.ok()) {
      std::cerr << "phalanx-validate: " << g.status().message() << "\n";
      return 2;
    }
    forced = *g;
  }
  const WriteKind mode = as == "merge-patch"             ? WriteKind::kMergePatch
                         : as == "strategic-merge-patch" ? WriteKind::kStrategicMergePatch
                                                         : WriteKind::kObject;
  std::optional<nlohmann::json> base;
  if (!base_file.empty()) {
    auto b = phalanx::schema::ReadJsonOrYaml(base_file);
    if (!b.ok()) {
      std::cerr << "phalanx-validate: " << b.status().message() << "\n";
      return 2;
    }
    base = *std::move(b);
  }
  int bodies = 0, invalid = 0, values = 0;
  for (const auto& f : files) {
    std::vector<nlohmann::json> items;
    if (auto st = ReadBodies(f, &items); !st.ok()) {
      std::cerr << "phalanx-validate: " << st.message() << "\n";
      return 2;
    }
    for (size_t i = 0; i < items.size(); ++i) {
      const std::string where = items.size() == 1 ? f : f + "[" + std::to_string(i) + "]";
      const GroupVersionKind gvk = forced ? *forced : GroupVersionKind::FromObject(items[i]);
      phalanx::schema::Result r =
          base ? set.ValidateMergePatched(*base, items[i], gvk) : set.Validate(items[i], gvk, mode);
      ++bodies;
      values += r.values_checked;
      if (!r.ok()) ++invalid;
      for (const auto& v : r.violations) std::cout << where << ": " << v.ToString() << "\n";
      if (r.cel_rules_not_evaluated > 0) {
        std::cout << where << ": note: " << r.cel_rules_not_evaluated
                  << " CEL rule(s) (x-kubernetes-validations) not evaluated\n";
      }
    }
  }
  std::cout << bodies << " bodies checked, " << values << " values, " << invalid << " invalid\n";
  return invalid == 0 ? 0 : 1;
}
