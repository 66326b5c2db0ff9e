// Install-tree consumer of babelqueue::sqs: the header, URL → options and the scheme
// registration link from the installed package alone (no server).
#include <babelqueue/sqs/sqs_transport.hpp>

#include <iostream>

int main() {
  babelqueue::sqs::register_transport();
  auto parsed =
      babelqueue::broker_url::parse("sqs://eu-west-1?endpoint=http://127.0.0.1:9324&batch=5");
  if (!parsed) return 1;
  auto o = babelqueue::sqs::options_from_url(*parsed);
  if (!o || o->region != "eu-west-1" || o->batch != 5) return 1;
  std::cout << "consumer-sqs-ok\n";
  return 0;
}
