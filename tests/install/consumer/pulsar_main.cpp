// Install-tree consumer of babelqueue::pulsar: the header, URL → options, the scheme
// registration and a (lazy, never connected) client link from the installed package alone —
// the Pulsar client found through the installed FindPulsar.cmake (no server).
#include <babelqueue/pulsar/pulsar_transport.hpp>

#include <iostream>

int main() {
  babelqueue::pulsar::register_transport();
  auto parsed =
      babelqueue::broker_url::parse("pulsar://127.0.0.1:6650?subscription=s&batching=false");
  if (!parsed) return 1;
  auto o = babelqueue::pulsar::options_from_url(*parsed);
  if (!o || o->subscription != "s" || o->batching) return 1;
  auto t = babelqueue::pulsar::pulsar_transport::open(*o);
  if (!t || (*t)->topic_of("orders") != "persistent://public/default/orders") return 1;
  std::cout << "consumer-pulsar-ok\n";
  return 0;
}
