// Install-tree consumer of babelqueue::rabbitmq: the header, the URL parser and the scheme
// registration link from the installed package alone (no broker needed).
#include <babelqueue/rabbitmq/rabbitmq_transport.hpp>

#include <iostream>

int main() {
  babelqueue::rabbitmq::register_transport();
  auto url = babelqueue::broker_url::parse("amqp://guest:guest@127.0.0.1:5672/%2F?prefetch=8");
  if (!url) return 1;
  auto o = babelqueue::rabbitmq::options_from_url(*url);
  if (!o || o->vhost != "/" || o->prefetch != 8) return 1;
  std::cout << "consumer-rabbitmq-ok\n";
  return 0;
}
