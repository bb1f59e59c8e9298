// A loopback HTTP/1.1 server that records every request and answers it: the stand-in API
// server the conformance suite points Phalanx's real client code at (LiveClusterClient,
// LeaderElector, LiveQueueStatusSink), so that what they put on the wire can be checked
// against the schemas (schema/schema.h). One connection at a time, "Connection: close".
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace phalanx::conformance {

struct RecordedRequest {
  std::string method;        // "POST", "PATCH", ...
  std::string path;          // "/api/v1/namespaces/ns/pods/p/binding"
  std::string content_type;  // the Content-Type header ("" when none)
  std::string body;
};

class RecordingServer {
 public:
  // The status and body answered to a request; default: 404 for GET, 201 for POST, else 200,
  // each with body "{}".
  using Responder = std::function<std::pair<int, std::string>(const RecordedRequest&)>;

  RecordingServer();  // binds 127.0.0.1 on a free port and starts serving
  ~RecordingServer();
  RecordingServer(const RecordingServer&) = delete;
  RecordingServer& operator=(const RecordingServer&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  void SetResponder(Responder r);
  std::vector<RecordedRequest> requests() const;

 private:
  void Serve();

  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  mutable std::mutex mu_;
  Responder responder_;
  std::vector<RecordedRequest> requests_;
};

}  // namespace phalanx::conformance
