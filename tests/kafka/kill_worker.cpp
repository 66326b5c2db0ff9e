// Test helper (not a test): an App worker on kafka:// whose handler announces the record on
// stdout, then sleeps — the group test SIGKILLs it mid-handler.
//   kafka_kill_worker <kafka-url> <topic>
#include <babelqueue/kafka/kafka_transport.hpp>
#include <babelqueue/runtime/app.hpp>

#include <chrono>
#include <cstdio>
#include <thread>

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  babelqueue::kafka::register_transport();
  babelqueue::app_options o;
  o.queue = argv[2];
  o.poll_timeout = std::chrono::milliseconds(500);
  babelqueue::app app(argv[1], o);
  app.handle("urn:babel:test:item", [](babelqueue::message& m) {
    std::printf("handling %s\n", m.data().at("n").dump().c_str());
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::minutes(5));
  });
  return app.consume() ? 0 : 1;
}
