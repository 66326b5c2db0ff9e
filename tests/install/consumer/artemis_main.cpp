// Install-tree consumer of babelqueue::artemis: the header, the URL parser and the scheme
// registration link from the installed package alone (Proton found through the installed
// FindProton.cmake; no broker needed).
#include <babelqueue/artemis/artemis_transport.hpp>

#include <iostream>

int main() {
  babelqueue::artemis::register_transport();
  auto url = babelqueue::broker_url::parse("artemis+ssl://u:p@broker:5671?prefetch=8");
  if (!url) return 1;
  auto o = babelqueue::artemis::options_from_url(*url);
  if (!o || !o->tls || o->prefetch != 8 || o->username != "u") return 1;
  std::cout << "consumer-artemis-ok\n";
  return 0;
}
