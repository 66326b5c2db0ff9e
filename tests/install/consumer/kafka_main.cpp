// Install-tree consumer of babelqueue::kafka: the header, the URL parser and the scheme
// registration link from the installed package alone (librdkafka found through the
// installed FindRdKafka.cmake; no broker needed).
#include <babelqueue/kafka/kafka_transport.hpp>

#include <iostream>

int main() {
  babelqueue::kafka::register_transport();
  auto url = babelqueue::broker_url::parse("kafka://k1:9092,k2:9093?group=g&retry_topics=5s,1m");
  if (!url) return 1;
  auto o = babelqueue::kafka::options_from_url(*url);
  if (!o || o->brokers.size() != 2 || o->retry_topics.size() != 2 || o->group != "g") return 1;
  std::cout << "consumer-kafka-ok\n";
  return 0;
}
