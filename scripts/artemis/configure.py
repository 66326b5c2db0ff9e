#!/usr/bin/env python3
"""Adapts an instance made by `artemis create` (2.40.0) for scripts/services.sh.

    configure.py INSTANCE CORE_PORT AMQP_PORT TLS_PORT KEYSTORE KEYSTORE_PASSWORD

etc/broker.xml:
  - acceptor `artemis` (every protocol): must already listen on 127.0.0.1:CORE_PORT
    (`artemis create --host 127.0.0.1 --default-port CORE_PORT`); checked, not changed;
  - acceptor `amqp`: 127.0.0.1:5672 -> 127.0.0.1:AMQP_PORT;
  - a new acceptor `amqps` on 127.0.0.1:TLS_PORT: the `amqp` acceptor's parameters plus
    sslEnabled=true with the PKCS12 KEYSTORE (no client certificate required);
  - address-setting `#` gets default-address-routing-type and default-queue-routing-type
    ANYCAST (a bare AMQP sender to a fresh address then makes a queue instead of a multicast
    address with no queue, where its messages were dropped);
  - a new address-setting `multicast.#`: a copy of the stock `#` with both routing types
    MULTICAST, i.e. Artemis's stock behaviour for addresses named multicast.*.
etc/artemis.profile: the broker JVM's heap -Xms512M -Xmx512M -> -Xms64M -Xmx512M.

Text edits, each of which must match exactly once (or the script fails), then a check of the
result parsed as XML. Prints one summary line.
"""
import re
import sys
import xml.etree.ElementTree as ET

NS = {"c": "urn:activemq:core"}


def replace_once(text, old, new, what):
    n = text.count(old)
    if n != 1:
        sys.exit("configure.py: %s: expected 1 match of %r, found %d" % (what, old, n))
    return text.replace(old, new)


def main(instance, core, amqp, tls, keystore, password):
    broker_xml = instance + "/etc/broker.xml"
    profile = instance + "/etc/artemis.profile"
    with open(broker_xml, encoding="utf-8") as f:
        xml = f.read()

    # Acceptors
    if xml.count('<acceptor name="artemis">tcp://127.0.0.1:%s?' % core) != 1:
        sys.exit("configure.py: the artemis acceptor does not listen on 127.0.0.1:%s" % core)
    m = re.search(r'( *)<acceptor name="amqp">tcp://127\.0\.0\.1:5672\?([^<]*)</acceptor>\n', xml)
    if not m or len(re.findall(r'<acceptor name="amqp">', xml)) != 1:
        sys.exit("configure.py: no single stock amqp acceptor on 127.0.0.1:5672 in " + broker_xml)
    indent, params = m.group(1), m.group(2)
    for ch in ";&<>\"'":
        if ch in keystore or ch in password:
            sys.exit("configure.py: the keystore path and password may not contain %r" % ch)
    amqp_line = ('%s<acceptor name="amqp">tcp://127.0.0.1:%s?%s</acceptor>\n'
                 % (indent, amqp, params))
    tls_line = ('%s<!-- AMQP over TLS (scripts/services.sh); no client certificate required -->\n'
                '%s<acceptor name="amqps">tcp://127.0.0.1:%s?%s;sslEnabled=true;'
                'keyStorePath=%s;keyStorePassword=%s;keyStoreType=PKCS12</acceptor>\n'
                % (indent, indent, tls, params, keystore, password))
    xml = xml[:m.start()] + amqp_line + tls_line + xml[m.end():]

    # Address settings
    m = re.search(r'( *<!--default for catch all-->\n)?( *)<address-setting match="#">\n(.*?)\n'
                  r'( *)</address-setting>\n', xml, re.S)
    if not m or xml.count('<address-setting match="#">') != 1:
        sys.exit("configure.py: no single <address-setting match=\"#\"> in " + broker_xml)
    stock_comment, indent, body, end_indent = m.groups()
    inner_indent = re.match(r" *", body).group(0)

    def setting(match, routing, comment):
        return ('%s<!-- %s -->\n%s<address-setting match="%s">\n%s\n'
                '%s<default-address-routing-type>%s</default-address-routing-type>\n'
                '%s<default-queue-routing-type>%s</default-queue-routing-type>\n'
                '%s</address-setting>\n'
                % (indent, comment, indent, match, body,
                   inner_indent, routing, inner_indent, routing, end_indent))

    xml = (xml[:m.start()]
           + setting("multicast.#", "MULTICAST",
                     "scripts/services.sh: Artemis's stock routing defaults for multicast.* "
                     "(tests of the client's link capabilities); otherwise as #")
           + (stock_comment or "")
           + setting("#", "ANYCAST",
                     "scripts/services.sh: bare AMQP links to a fresh address make an "
                     "anycast queue")
           + xml[m.end():])
    with open(broker_xml, "w", encoding="utf-8") as f:
        f.write(xml)

    # Heap
    with open(profile, encoding="utf-8") as f:
        prof = f.read()
    prof = replace_once(prof, " -Xms512M -Xmx512M ", " -Xms64M -Xmx512M ", "the heap in " + profile)
    with open(profile, "w", encoding="utf-8") as f:
        f.write(prof)

    # Check the result as XML
    core_el = ET.parse(broker_xml).getroot().find("c:core", NS)
    acceptors = {a.get("name"): a.text for a in core_el.findall("c:acceptors/c:acceptor", NS)}
    want = {"artemis": core, "amqp": amqp, "amqps": tls}
    for name, port in want.items():
        url = acceptors.get(name, "")
        if not url.startswith("tcp://127.0.0.1:%s?" % port):
            sys.exit("configure.py: acceptor %s is %r, not on 127.0.0.1:%s" % (name, url, port))
    if set(acceptors) != set(want):
        sys.exit("configure.py: unexpected acceptors %s" % sorted(acceptors))
    if "sslEnabled=true" not in acceptors["amqps"]:
        sys.exit("configure.py: the amqps acceptor has no TLS")
    settings = {s.get("match"): s
                for s in core_el.findall("c:address-settings/c:address-setting", NS)}
    for match, routing in (("#", "ANYCAST"), ("multicast.#", "MULTICAST")):
        s = settings.get(match)
        got = [s.findtext("c:default-%s-routing-type" % k, None, NS) if s is not None else None
               for k in ("address", "queue")]
        if got != [routing, routing]:
            sys.exit("configure.py: address-setting %s routing is %s, not %s"
                     % (match, got, routing))
    def stock(setting):
        return sorted((e.tag, e.text) for e in setting if "routing-type" not in e.tag)

    if stock(settings["#"]) != stock(settings["multicast.#"]):
        sys.exit("configure.py: address-settings # and multicast.# differ beyond routing")
    print("configure.py: acceptors artemis 127.0.0.1:%s, amqp 127.0.0.1:%s, amqps 127.0.0.1:%s; "
          "address-settings # ANYCAST, multicast.# MULTICAST; heap -Xms64M -Xmx512M"
          % (core, amqp, tls))


if __name__ == "__main__":
    if len(sys.argv) != 7:
        sys.exit(__doc__)
    main(*sys.argv[1:])
