// Hostile input to the API client: malformed LIST / WATCH bodies, 10^5 levels of
// JSON nesting, broken kubeconfigs (regressions found by fuzz/), and the security rules of
// docs/security.md: tokens and keys never appear in error messages, credential files that
// others can read are reported.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "client/credential_files.h"
#include "client/objects.h"
#include "client/rest_client.h"
#include "client/rest_config.h"

namespace phalanx::client {
namespace {

namespace fs = std::filesystem;

const ResourceType kPods{"", "v1", "pods", "Pod", Target::kPod, ""};

std::string Repeat(const std::string& s, int n) {
  std::string out;
  out.reserve(s.size() * n);
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/phalanx-client-hostile.XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string Write(const std::string& name, const std::string& text, mode_t mode = 0600) const {
    const std::string p = path_ + "/" + name;
    std::ofstream(p) << text;
    ::chmod(p.c_str(), mode);
    return p;
  }

 private:
  std::string path_;
};

// Found by fuzz/fuzz_objects.cc: a LIST body that is JSON but not an object dereferenced a
// null simdjson document.
TEST(ClientHostileTest, ListBodyThatIsNotAnObject) {
  for (const std::string body : {"0", "[]", "\"x\"", "null", "true"}) {
    ListPage page;
    std::string err;
    EXPECT_FALSE(api::OkOrMessage(DecodeList(body, kPods, &page), &err)) << body;
    EXPECT_EQ(err, "pods list: expected a JSON object") << body;
    EXPECT_TRUE(page.items.empty());
  }
  ListPage page;
  std::string err;
  EXPECT_FALSE(api::OkOrMessage(DecodeList(R"({"items": 3})", kPods, &page), &err));
  EXPECT_EQ(err, "pods list: items: expected an array");
  ASSERT_TRUE(api::OkOrMessage(DecodeList(R"({"items": null})", kPods, &page), &err)) << err;
}

TEST(ClientHostileTest, WatchLinesThatAreNotEvents) {
  for (const std::string line :
       {"0", "[]", R"({"type": 1})", R"({"type":"ADDED","object":7})", R"({"type":"ADDED"})", ""}) {
    WatchEvent ev;
    std::string err;
    EXPECT_FALSE(api::OkOrMessage(DecodeWatchEvent(line, kPods, &ev), &err)) << line;
    EXPECT_EQ(err.rfind("pods", 0), 0u) << err;
  }
}

// simdjson stops at 1024 levels: a clear error, no recursion in our code.
TEST(ClientHostileTest, DeeplyNestedJsonIsAClearError) {
  const std::string deep = R"({"metadata":{"name":"p"},"spec":)" + Repeat(R"({"a":)", 100000) +
                           "1" + Repeat("}", 100000) + "}";
  Object o;
  std::string err;
  EXPECT_FALSE(api::MoveOrMessage(DecodeObjectJson(deep, kPods), &o, &err));
  EXPECT_EQ(err.rfind("pods: malformed JSON: ", 0), 0u) << err;
  const std::string arrays = "[" + Repeat("[", 100000) + Repeat("]", 100000) + "]";
  ListPage page;
  EXPECT_FALSE(api::OkOrMessage(DecodeList(arrays, kPods, &page), &err));
  EXPECT_EQ(err.rfind("pods list: malformed JSON: ", 0), 0u) << err;
  // Under simdjson's limit but over yaml-cpp's (500): the object decoder names the object.
  const std::string mid = R"({"metadata":{"name":"p","namespace":"d"},"spec":)" +
                          Repeat(R"({"a":)", 800) + "1" + Repeat("}", 800) + "}";
  EXPECT_FALSE(api::MoveOrMessage(DecodeObjectJson(mid, kPods), &o, &err));
  EXPECT_NE(err.find("nesting deeper than 500 levels"), std::string::npos) << err;
}

TEST(ClientHostileTest, HugeListOfObjectsSkipsOnlyTheBadOnes) {
  std::string body = R"({"metadata":{"resourceVersion":"9"},"items":[)";
  for (int i = 0; i < 20000; ++i) {
    if (i) body += ",";
    body +=
        i % 1000 == 7
            ? R"({"metadata":{"name":"bad)" + std::to_string(i) +
                  R"("},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1e308"}}}]}})"
            : R"({"metadata":{"name":"p)" + std::to_string(i) +
                  R"(","namespace":"d"},"spec":{"containers":[{"name":"c"}]}})";
  }
  body += "]}";
  ListPage page;
  std::string err;
  ASSERT_TRUE(api::OkOrMessage(DecodeList(body, kPods, &page), &err)) << err;
  EXPECT_EQ(page.items.size(), 19980u);
  ASSERT_EQ(page.skipped.size(), 20u);
  EXPECT_NE(page.skipped[0].find("quantity out of range"), std::string::npos) << page.skipped[0];
}

// Found by fuzz/fuzz_kubeconfig.cc: a users[] entry whose "user" key is missing made
// yaml-cpp throw out of LoadKubeconfig (std::terminate in phalanx run).
TEST(ClientHostileTest, KubeconfigEntryWithoutItsMap) {
  TempDir dir;
  const std::string kc = dir.Write("config", R"(apiVersion: v1
kind: Config
current-context: ctx
contexts:
- name: ctx
  context: {cluster: c, user: u}
clusters:
- name: c
  cluster: {server: https://127.0.0.1:6443}
users:
- name: u
  usr: {token: abc}
- name: v
)");
  RestConfig rc;
  std::string err;
  ASSERT_TRUE(api::OkOrMessage(LoadKubeconfig(kc, "", &rc), &err))
      << err;  // a user without credentials
  EXPECT_TRUE(rc.token.empty());
  const std::string broken = dir.Write("broken", R"(current-context: ctx
contexts: [{name: ctx, context: {cluster: c}}]
clusters: [{name: c}, 7, [x]]
)");
  EXPECT_FALSE(api::OkOrMessage(LoadKubeconfig(broken, "", &rc), &err));
  EXPECT_EQ(err, "kubeconfig " + broken + ": cluster \"c\": server: required");
}

TEST(ClientHostileTest, KubeconfigNestingAndGarbage) {
  TempDir dir;
  RestConfig rc;
  std::string err;
  const std::string deep = dir.Write("deep", "a: " + Repeat("[", 100000) + Repeat("]", 100000));
  EXPECT_FALSE(api::OkOrMessage(LoadKubeconfig(deep, "", &rc), &err));
  EXPECT_NE(err.find("nesting deeper than 500 levels"), std::string::npos) << err;
  const std::string garbage = dir.Write("garbage", std::string("\x00\xff{[\x01:", 6));
  EXPECT_FALSE(api::OkOrMessage(LoadKubeconfig(garbage, "", &rc), &err));
  EXPECT_EQ(err.rfind("kubeconfig " + garbage + ": ", 0), 0u) << err;
}

// Tokens and keys never appear in error messages (which end up in logs and events).
TEST(ClientHostileTest, SecretsNeverInErrorMessages) {
  const std::string token = "s3cr3t-t0ken-aaaaaaaaaaaaaaaa";
  RestConfig c;
  c.server = "https://127.0.0.1:6443";
  c.token = token;
  c.source_file = "/k/config";
  RestClient rc(c);
  for (long status : {400L, 401L, 403L, 404L, 409L, 500L, 503L}) {
    Response r;
    r.status = status;
    r.body = R"({"kind":"Status","message":"denied","code":)" + std::to_string(status) + "}";
    const std::string d = rc.Describe("GET", "/api/v1/pods?watch=1", r);
    EXPECT_EQ(d.find(token), std::string::npos) << d;
    EXPECT_EQ(d.find("s3cr3t"), std::string::npos) << d;
  }
  Response tls;
  tls.curl_code = 60;
  tls.curl_error = "SSL certificate problem";
  EXPECT_EQ(rc.Describe("GET", "/apis", tls).find(token), std::string::npos);

  // Bad base64 in key or certificate data: the message names the field, not the value.
  TempDir dir;
  const std::string secret = "c2VjcmV0LWtleS1tYXRlcmlhbA!!";
  const std::string kc = dir.Write("config", R"(current-context: ctx
contexts: [{name: ctx, context: {cluster: c, user: u}}]
clusters: [{name: c, cluster: {server: https://127.0.0.1:6443}}]
users: [{name: u, user: {client-certificate-data: Y2VydA==, client-key-data: ")" +
                                                 secret + R"("}}]
)");
  RestConfig out;
  std::string err;
  ASSERT_FALSE(api::OkOrMessage(LoadKubeconfig(kc, "", &out), &err));
  EXPECT_NE(err.find("client-key-data: not valid base64"), std::string::npos) << err;
  EXPECT_EQ(err.find(secret), std::string::npos) << err;
}

TEST(ClientHostileTest, CredentialFilesReadableByOthersAreReported) {
  TempDir dir;
  const std::string key = dir.Write("client.key", "KEY", 0644);
  const std::string tok = dir.Write("token", "tok", 0640);
  const std::string ok = dir.Write("ok.key", "KEY", 0600);
  RestConfig c;
  c.source_file = dir.Write("config", "x", 0600);
  c.client_key_file = key;
  c.token_file = tok;
  c.token = "tok";
  auto w = CredentialFileWarnings(c);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0], "client-key " + key +
                      " is readable by group and others (mode 0644); run: chmod 600 " + key);
  EXPECT_EQ(w[1], "tokenFile " + tok + " is readable by group (mode 0640); run: chmod 600 " + tok);
  for (const auto& m : w) EXPECT_EQ(m.find("KEY"), std::string::npos);

  c.client_key_file = ok;
  c.token_file.clear();
  c.token = "embedded";  // token in the kubeconfig itself: the kubeconfig is checked
  ::chmod(c.source_file.c_str(), 0604);
  w = CredentialFileWarnings(c);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].rfind("kubeconfig (with embedded credentials) " + c.source_file +
                           " is readable by others (mode 0604)",
                       0),
            0u)
      << w[0];
  ::chmod(c.source_file.c_str(), 0600);
  EXPECT_TRUE(CredentialFileWarnings(c).empty());

  RestConfig in_cluster;  // no kubeconfig: the kubelet's files are not checked
  in_cluster.token_file = tok;
  EXPECT_TRUE(CredentialFileWarnings(in_cluster).empty());
}

}  // namespace
}  // namespace phalanx::client
