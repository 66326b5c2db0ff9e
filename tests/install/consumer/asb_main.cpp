// Install-tree consumer of babelqueue::asb: the header, the connection string → URL → options
// path, the scheme registration and the SAS token link from the installed package alone
// (Proton found through the installed FindProton.cmake, OpenSSL through its own package; no
// broker).
#include <babelqueue/asb/asb_transport.hpp>
#include <babelqueue/asb/sas_token.hpp>

#include <iostream>

int main() {
  babelqueue::asb::register_transport();
  auto url = babelqueue::asb::url_from_connection_string(
      "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=k;SharedAccessKey=a+b/c=");
  if (!url) return 1;
  auto parsed = babelqueue::broker_url::parse(*url);
  if (!parsed) return 1;
  auto o = babelqueue::asb::options_from_url(*parsed);
  if (!o || o->key != "a+b/c=" || o->port != 5671) return 1;
  auto token = babelqueue::asb::make_sas_token("sb://ns.servicebus.windows.net/q", "name", "key",
                                               std::chrono::system_clock::now());
  if (!token || token->rfind("SharedAccessSignature ", 0) != 0) return 1;
  std::cout << "consumer-asb-ok\n";
  return 0;
}
