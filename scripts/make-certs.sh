#!/usr/bin/env bash
# Makes a local test PKI with openssl (no network): a CA and certificates it signs, plus faulty
# ones for tests. Usage: scripts/make-certs.sh [DIR] (default: ./certs). Files (PEM):
#   ca.pem/ca.key                 test CA (ECDSA P-256)
#   server.pem/server.key         localhost + 127.0.0.1, ECDSA P-256 (the examples' --tls default)
#   server-rsa.pem/.key           the same names, RSA-2048
#   server-ed25519.pem/.key       the same names, Ed25519
#   client.pem/client.key         a client certificate (CN=netloop-client) for mTLS
#   other-ca.pem, other-server.pem/.key   a second CA and a localhost certificate it signs
#   expired.pem/.key              localhost, signed by the CA, expired in 2021
#   wrong-host.pem/.key           signed by the CA for example.org only
#   revoked-server.pem/.key       localhost, signed by the CA, then revoked
#   revoked-client.pem/.key       a client certificate (CN=revoked-client), then revoked
#   crl.pem                       the CA's revocation list: the two revoked-* certificates
#   server.pfx                    server.pem, its key and ca.pem in PKCS#12 (node:tls's `pfx`),
#                                 passphrase "netloop", OpenSSL 3's scheme (PBES2 AES-256, SHA-256 MAC)
#   server-3des.pfx               the same under the older scheme (3DES, SHA-1 MAC), same passphrase
#   server-rc2.pfx                server.pem under RC2-40 (`-legacy`), which node:tls on OpenSSL 3 refuses
#   server-rsa.pfx                server-rsa.pem, its key and ca.pem, passphrase `netloop-rsa`
#   client.pfx                    client.pem and its key, an empty passphrase
# Certificates are valid for 10 years from the day they are made (except expired.pem).
set -euo pipefail
dir=${1:-certs}
mkdir -p "$dir"
cd "$dir"
days=3650
ec() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

ca() { # name cn
  ec "$1.key"
  openssl req -x509 -new -key "$1.key" -sha256 -days $days -subj "/CN=$2" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
    -out "$1.pem" 2>/dev/null
}

leaf() { # name ca cn san eku [keygen...]
  local name=$1 ca=$2 cn=$3 san=$4 eku=$5
  shift 5
  "$@" "$name.key"
  openssl req -new -key "$name.key" -subj "/CN=$cn" -out "$name.csr" 2>/dev/null
  printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=%s\n%s' \
    "$eku" "${san:+subjectAltName=$san}" > "$name.ext"
  openssl x509 -req -in "$name.csr" -CA "$ca.pem" -CAkey "$ca.key" -CAcreateserial -days $days \
    -sha256 -extfile "$name.ext" -out "$name.pem" 2>/dev/null
  rm -f "$name.csr" "$name.ext"
}

rsa() { openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$1" 2>/dev/null; }
ed() { openssl genpkey -algorithm ED25519 -out "$1" 2>/dev/null; }

names="DNS:localhost,IP:127.0.0.1"
ca ca "netloop test CA"
leaf server ca localhost "$names" serverAuth ec
leaf server-rsa ca localhost "$names" serverAuth rsa
leaf server-ed25519 ca localhost "$names" serverAuth ed
leaf client ca netloop-client "" clientAuth ec
leaf wrong-host ca example.org "DNS:example.org" serverAuth ec
leaf revoked-server ca localhost "$names" serverAuth ec
leaf revoked-client ca revoked-client "" clientAuth ec
ca other-ca "another test CA"
leaf other-server other-ca localhost "$names" serverAuth ec

# expired.pem: `openssl ca` is the one 3.0 command that takes explicit validity dates.
ec expired.key
openssl req -new -key expired.key -subj "/CN=localhost" -out expired.csr 2>/dev/null
mkdir -p ca.db && : > ca.db/index.txt && echo 1000 > ca.db/serial && echo 01 > ca.db/crlnumber
cat > ca.db/ca.cnf <<CNF
[ca]
default_ca = test
[test]
database = ca.db/index.txt
serial = ca.db/serial
new_certs_dir = ca.db
certificate = ca.pem
private_key = ca.key
default_md = sha256
policy = any
copy_extensions = none
x509_extensions = leaf
default_crl_days = $days
unique_subject = no
# A CRL number and an authority key id make a v2 list (rustls's webpki reads only v2).
crlnumber = ca.db/crlnumber
crl_extensions = crl_ext
[any]
commonName = supplied
[crl_ext]
authorityKeyIdentifier = keyid:always
[leaf]
basicConstraints = CA:FALSE
extendedKeyUsage = serverAuth
subjectAltName = $names
CNF
openssl ca -batch -config ca.db/ca.cnf -startdate 200101000000Z -enddate 210101000000Z \
  -in expired.csr -out expired.pem -notext >/dev/null 2>&1
# crl.pem: the CA revokes revoked-server.pem and revoked-client.pem (added to its database).
for c in revoked-server revoked-client; do
  openssl ca -config ca.db/ca.cnf -revoke "$c.pem" -crl_reason keyCompromise >/dev/null 2>&1
done
openssl ca -config ca.db/ca.cnf -gencrl -out crl.pem >/dev/null 2>&1
rm -rf expired.csr ca.db ./*.srl

pfx() { # name cert key [openssl pkcs12 options...]
  local name=$1 cert=$2 key=$3
  shift 3
  openssl pkcs12 -export -in "$cert" -inkey "$key" -out "$name" "$@"
}
pfx server.pfx server.pem server.key -certfile ca.pem -passout pass:netloop
pfx server-3des.pfx server.pem server.key -certfile ca.pem -passout pass:netloop \
  -keypbe PBE-SHA1-3DES -certpbe PBE-SHA1-3DES -macalg sha1
# RC2 needs OpenSSL's legacy provider; without it there is no such file (tests skip it).
pfx server-rc2.pfx server.pem server.key -passout pass:netloop -legacy 2>/dev/null || rm -f server-rc2.pfx
pfx server-rsa.pfx server-rsa.pem server-rsa.key -certfile ca.pem -passout pass:netloop-rsa
pfx client.pfx client.pem client.key -passout pass:
echo "test certificates in $(pwd)"
