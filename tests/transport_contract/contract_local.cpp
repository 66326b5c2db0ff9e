// The contract suite on the transports that need no server: memory:// and sqlite://. Its own
// executable so that the sanitizer phases, which run no live-broker suite, still run them.
#include "transport_contract/contract_fixture.hpp"

#include <babelqueue/memory/memory_transport.hpp>
#include <babelqueue/sqlite/sqlite_transport.hpp>

namespace bqcontract {

void register_transports() {
  babelqueue::memory::register_transport();
  babelqueue::sqlite::register_transport();
}

namespace {

std::vector<target> local_targets() {
  return {
      {.name = "memory",
       .url = [](const std::string& id) { return "memory://" + id; },
       .local = true},
      // A 5 s visibility timeout: a message a closed consumer held comes back within a case.
      {.name = "sqlite",
       .url =
           [](const std::string& id) {
             return sqlite_url(id) + "?visibility_timeout=5s&poll_interval=20ms";
           },
       .local = true},
  };
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(Local, TransportContract, ::testing::ValuesIn(local_targets()),
                         target_name);

}  // namespace bqcontract
