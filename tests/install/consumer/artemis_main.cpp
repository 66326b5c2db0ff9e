// Install-tree consumer of babelqueue::artemis (and the public part of babelqueue::amqp10):
// the header, the URL parser, the scheme registration and the ASB SAS token link from the
// installed package alone (Proton found through the installed FindProton.cmake, OpenSSL
// through its own package; no broker needed).
#include <babelqueue/amqp10/sas_token.hpp>
#include <babelqueue/artemis/artemis_transport.hpp>

#include <iostream>

int main() {
  babelqueue::artemis::register_transport();
  auto url = babelqueue::broker_url::parse("artemis+ssl://u:p@broker:5671?prefetch=8");
  if (!url) return 1;
  auto o = babelqueue::artemis::options_from_url(*url);
  if (!o || !o->tls || o->prefetch != 8 || o->username != "u") return 1;
  auto token = babelqueue::amqp10::make_sas_token("sb://ns.servicebus.windows.net/q", "name", "key",
                                                  std::chrono::system_clock::now());
  if (!token || token->rfind("SharedAccessSignature ", 0) != 0) return 1;
  std::cout << "consumer-artemis-ok\n";
  return 0;
}
