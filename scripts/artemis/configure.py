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
  - security-setting `#`: the role `guest` (SASL ANONYMOUS logins, see login.config below)
    gets what a client needs to use queues and topics: createAddress, createDurableQueue,
    createNonDurableQueue, deleteNonDurableQueue, send, consume, browse (not manage,
    deleteAddress, deleteDurableQueue);
  - a new address `$cbs`, MULTICAST (the Azure Service Bus stand-in: clients send CBS
    put-token requests to it, scripts/artemis/cbs-responder.py answers on it, and every
    receiver on `$cbs` sees the answers and picks its own by correlation-id);
  - the `amqp` acceptor strips the prefix `amqps://127.0.0.1:AMQP_PORT/` from addresses
    (anycastPrefix): the azure-servicebus SDKs address an entity by that URL (the endpoint of
    the connection string), other clients by the bare name, and both must reach one queue.
etc/login.config: `artemis create --require-login` writes one PropertiesLoginModule
  `required`; it becomes `sufficient`, followed by a GuestLoginModule `sufficient` (user
  `anonymous`, role `guest`) with credentialsInvalidate=true: a login without credentials
  (SASL ANONYMOUS) is the guest, admin/admin is admin, and a wrong password is still refused
  (the guest module fails when credentials were given). That is what `artemis create
  --allow-anonymous` writes (2.40.0), but for its guest (there: user admin, role amq, and no
  credentialsInvalidate, so any wrong password logs in as admin).
etc/artemis.profile: the broker JVM's heap -Xms512M -Xmx512M -> -Xms64M -Xmx512M.

Text edits, each of which must match exactly once (or the script fails), then a check of the
result parsed as XML. Prints one summary line.
"""
import re
import sys
import xml.etree.ElementTree as ET

NS = {"c": "urn:activemq:core"}
GUEST_PERMISSIONS = ("createNonDurableQueue", "deleteNonDurableQueue", "createDurableQueue",
                     "createAddress", "consume", "browse", "send")


def asb_prefix(amqp_port):
    """The address prefix of the azure-servicebus SDK's entity URLs on the amqp acceptor."""
    return "amqps://127.0.0.1:%s/" % amqp_port


def replace_once(text, old, new, what):
    n = text.count(old)
    if n != 1:
        sys.exit("configure.py: %s: expected 1 match of %r, found %d" % (what, old, n))
    return text.replace(old, new)


def main(instance, core, amqp, tls, keystore, password):
    broker_xml = instance + "/etc/broker.xml"
    login_config = instance + "/etc/login.config"
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
    amqp_line = ('%s<!-- anycastPrefix: the azure-servicebus SDK\'s entity URLs (scripts/services.sh) -->\n'
                 '%s<acceptor name="amqp">tcp://127.0.0.1:%s?%s;anycastPrefix=%s</acceptor>\n'
                 % (indent, indent, amqp, params, asb_prefix(amqp)))
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
    # Security: the guest role
    m = re.search(r'( *)<security-setting match="#">\n(.*?)( *)</security-setting>\n', xml, re.S)
    if not m or xml.count("<security-setting ") != 1:
        sys.exit("configure.py: no single <security-setting match=\"#\"> in " + broker_xml)
    body = m.group(2)
    for perm in GUEST_PERMISSIONS:
        body = replace_once(body, '<permission type="%s" roles="amq"/>' % perm,
                            '<permission type="%s" roles="amq,guest"/>' % perm,
                            "the %s permission of security-setting #" % perm)
    body = ('%s   <!-- scripts/services.sh: role guest = SASL ANONYMOUS (etc/login.config) -->\n'
            % m.group(1)) + body
    xml = xml[:m.start(2)] + body + xml[m.end(2):]

    # The CBS node of the Azure Service Bus stand-in
    m = re.search(r'\n( *)</addresses>\n', xml)
    if not m or xml.count("</addresses>") != 1:
        sys.exit("configure.py: no single </addresses> in " + broker_xml)
    ind = m.group(1) + "   "
    xml = (xml[:m.start() + 1]
           + '%s<!-- scripts/services.sh: CBS put-token requests and replies (Azure Service '
             'Bus stand-in, scripts/artemis/cbs-responder.py) -->\n'
             '%s<address name="$cbs">\n%s   <multicast/>\n%s</address>\n\n'
           % (ind, ind, ind, ind)
           + xml[m.start() + 1:])
    with open(broker_xml, "w", encoding="utf-8") as f:
        f.write(xml)

    # Login: admin/admin, or anonymous as the guest; a wrong password is refused
    with open(login_config, encoding="utf-8") as f:
        login = f.read()
    login = replace_once(
        login, "PropertiesLoginModule required\n", "PropertiesLoginModule sufficient\n",
        "the PropertiesLoginModule in " + login_config)
    login = replace_once(
        login, 'org.apache.activemq.jaas.properties.role="artemis-roles.properties";\n',
        'org.apache.activemq.jaas.properties.role="artemis-roles.properties";\n'
        '\n'
        '   /* scripts/services.sh: no credentials (SASL ANONYMOUS) = user anonymous, role guest;\n'
        '      credentialsInvalidate: a wrong password does not fall through to the guest */\n'
        '   org.apache.activemq.artemis.spi.core.security.jaas.GuestLoginModule sufficient\n'
        '       debug=false\n'
        '       credentialsInvalidate=true\n'
        '       org.apache.activemq.jaas.guest.user="anonymous"\n'
        '       org.apache.activemq.jaas.guest.role="guest";\n',
        "the end of the PropertiesLoginModule in " + login_config)
    with open(login_config, "w", encoding="utf-8") as f:
        f.write(login)

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
    if not acceptors["amqp"].endswith(";anycastPrefix=" + asb_prefix(amqp)):
        sys.exit("configure.py: the amqp acceptor has no anycastPrefix")
    perms = {p.get("type"): p.get("roles").split(",")
             for p in core_el.findall("c:security-settings/c:security-setting/c:permission", NS)}
    granted = sorted(t for t, roles in perms.items() if "guest" in roles)
    if granted != sorted(GUEST_PERMISSIONS):
        sys.exit("configure.py: the guest role has %s, not %s" % (granted, GUEST_PERMISSIONS))
    cbs = [a for a in core_el.findall("c:addresses/c:address", NS) if a.get("name") == "$cbs"]
    if len(cbs) != 1 or [e.tag for e in cbs[0]] != ["{urn:activemq:core}multicast"]:
        sys.exit("configure.py: no single MULTICAST address $cbs")
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
          "address-settings # ANYCAST, multicast.# MULTICAST; address $cbs MULTICAST; "
          "SASL ANONYMOUS = role guest; heap -Xms64M -Xmx512M"
          % (core, amqp, tls))


if __name__ == "__main__":
    if len(sys.argv) != 7:
        sys.exit(__doc__)
    main(*sys.argv[1:])
