#include "perf/perf_template.h"

#include <gtest/gtest.h>

namespace phalanx::perf {
namespace {

std::string Render(const std::string& t, double index = 3, double count = 10) {
  auto r = RenderTemplate(t, "t.yaml", {{"Index", index}, {"Count", count}});
  return r.ok() ? *r : "ERROR: " + std::string(r.status().message());
}

TEST(PerfTemplateTest, VariablesAndUpstreamsFunctions) {
  EXPECT_EQ(Render("name: pod-{{.Index}}"), "name: pod-3");
  EXPECT_EQ(Render("n: {{ .Count }}"), "n: 10");
  // event_handling/templates/podupdate-pod-blocker-update.yaml
  EXPECT_EQ(Render("memory: {{ DivideInt 30000 .Count }}Mi"), "memory: 3000Mi");
  EXPECT_EQ(Render("x: {{ Mod .Index 2 }}", 7), "x: 1");
  EXPECT_EQ(Render("x: {{DivideInt .Index 5}}", 14), "x: 2");
  EXPECT_EQ(Render("x: {{ AddInt .Index 1 2 }}"), "x: 6");
  EXPECT_EQ(Render("x: {{ MultiplyInt .Index 3 }}"), "x: 9");
  EXPECT_EQ(Render("x: {{ SubtractInt .Count .Index }}"), "x: 7");
  EXPECT_EQ(Render("x: {{ DivideFloat .Index 2 }}"), "x: 1.5");
  EXPECT_EQ(Render("a\n  {{- .Index -}}  \nb"), "a3b");
  EXPECT_FALSE(IsTemplated("name: plain"));
  EXPECT_TRUE(IsTemplated("name: {{.Index}}"));
}

TEST(PerfTemplateTest, WhatIsNotSupportedIsAnErrorNamingTheAction) {
  EXPECT_EQ(Render("{{ if .Index }}x{{ end }}"),
            "ERROR: t.yaml: template: {{ if .Index }}: unsupported function or syntax \"if\" "
            "(supported: .Index, .Count, AddInt, SubtractInt, MultiplyInt, DivideInt, Mod and "
            "their Float forms)");
  EXPECT_EQ(Render("{{ .Missing }}"),
            "ERROR: t.yaml: template: {{ .Missing }}: no variable .Missing");
  EXPECT_EQ(Render("{{ Mod .Index 0 }}"),
            "ERROR: t.yaml: template: {{ Mod .Index 0 }}: division by zero");
  EXPECT_EQ(Render("x: {{ .Index"), "ERROR: t.yaml: template: unclosed action \"{{\"");
  EXPECT_EQ(Render("{{ Mod .Index }}"),
            "ERROR: t.yaml: template: {{ Mod .Index }}: Mod takes 2 arguments");
}

}  // namespace
}  // namespace phalanx::perf
