// Which endpoints `phalanx run` serves for --bind-address / --secure-port (app/serving.h's
// table), and flag errors.
#include "app/serving.h"

#include <gtest/gtest.h>

namespace phalanx::app {
namespace {

ServingPlan Plan(const std::string& bind, int port, bool port_set) {
  ServingOptions o;
  o.bind_address = bind;
  o.secure_port = port;
  o.secure_port_set = port_set;
  auto p = PlanServing(o);
  EXPECT_TRUE(p.ok()) << p.status().message();
  return p.ok() ? *p : ServingPlan{};
}

TEST(Serving, PlanFollowsUpstreamFlagsAndKeepsThePlainForm) {
  ServingOptions defaults;
  auto d = PlanServing(defaults);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->secure_address, "0.0.0.0:10259");  // upstream's default
  EXPECT_EQ(d->plain_address, "");
  EXPECT_EQ(Plan("10.1.2.3", 10259, true).secure_address, "10.1.2.3:10259");
  EXPECT_EQ(Plan("::1", 8443, true).secure_address, "[::1]:8443");
  EXPECT_EQ(Plan("10.1.2.3", 0, true).secure_address, "");
  // Phalanx's plain form: no HTTPS unless --secure-port is given.
  ServingPlan p = Plan("127.0.0.1:9000", 10259, false);
  EXPECT_EQ(p.plain_address, "127.0.0.1:9000");
  EXPECT_EQ(p.secure_address, "");
  p = Plan("127.0.0.1:9000", 9443, true);
  EXPECT_EQ(p.plain_address, "127.0.0.1:9000");
  EXPECT_EQ(p.secure_address, "127.0.0.1:9443");
  EXPECT_EQ(Plan("localhost:9000", 9443, true).secure_address, "0.0.0.0:9443");
  p = Plan("", 10259, false);
  EXPECT_EQ(p.plain_address, "");
  EXPECT_EQ(p.secure_address, "");
  EXPECT_EQ(Plan("", 9443, true).secure_address, "0.0.0.0:9443");
}

TEST(Serving, BadFlagsAreErrorsNamingThem) {
  ServingOptions o;
  o.secure_port = 70000;
  EXPECT_EQ(PlanServing(o).status().message(), "--secure-port: 70000 is not in [0, 65535]");
  o.secure_port = 10259;
  o.tls_cert_file = "/tmp/cert.pem";
  EXPECT_EQ(PlanServing(o).status().message(),
            "--tls-cert-file and --tls-private-key-file: give both or neither");
  o.tls_private_key_file = "/nonexistent/key.pem";
  o.tls_cert_file = "/nonexistent/cert.pem";
  o.bind_address = "127.0.0.1";
  o.secure_port = 0;  // nothing to serve: the files are not read
  Serving s;
  EXPECT_TRUE(s.Start(o, nullptr, [](const std::string&) { return metrics::HttpResponse{}; }).ok());
  o.secure_port = 1;
  Serving s2;
  auto st = s2.Start(o, nullptr, [](const std::string&) { return metrics::HttpResponse{}; });
  EXPECT_EQ(st.message(), "--tls-cert-file: cannot read /nonexistent/cert.pem");
}

}  // namespace
}  // namespace phalanx::app
