#!/usr/bin/env bash
# Serve a Chroma server to a team safely: nginx in front of it, speaking TLS with a
# certificate of the team's own CA and letting through only requests that carry the team's
# token. The example README.md gives, and what docs/journal/benchmarks.md measured through.
#
#   scripts/store-tls-proxy.sh DIR CHROMA_PORT TLS_PORT [HOST]
#
# Makes (once) DIR/ca.pem (give it to the team: IRET_STORE_CA), DIR/server.pem for HOST
# (default localhost) signed by it, DIR/token (give it to the team: IRET_STORE_TOKEN_FILE),
# writes DIR/nginx.conf and runs nginx in the foreground on TLS_PORT, passing to Chroma on
# 127.0.0.1:CHROMA_PORT (start Chroma on loopback only: `chroma run --host 127.0.0.1`).
# Needs openssl and nginx (Debian: apt-get install nginx). Then:
#
#   IRET_STORE_CA=DIR/ca.pem IRET_STORE_TOKEN_FILE=DIR/token \
#     iret --store chroma+https://HOST:TLS_PORT/team index
set -euo pipefail
dir=${1:?DIR}; chroma=${2:?CHROMA_PORT}; port=${3:?TLS_PORT}; host=${4:-localhost}
umask 077
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
if [ ! -f "$dir/ca.pem" ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -days 365 -subj "/CN=team store CA" \
    -keyout "$dir/ca.key" -out "$dir/ca.pem" 2>/dev/null
fi
if [ ! -f "$dir/server.pem" ]; then
  openssl req -newkey rsa:2048 -nodes -subj "/CN=$host" \
    -keyout "$dir/server.key" -out "$dir/server.csr" 2>/dev/null
  printf 'subjectAltName=DNS:%s,IP:127.0.0.1\n' "$host" > "$dir/san.ext"
  openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" \
    -CAcreateserial -days 90 -extfile "$dir/san.ext" -out "$dir/server.pem" 2>/dev/null
fi
if [ ! -f "$dir/token" ]; then
  (umask 077; openssl rand -hex 24 > "$dir/token")
fi
token=$(cat "$dir/token")
cat > "$dir/nginx.conf" <<EOF
daemon off;
master_process off;
worker_processes 1;
pid $dir/nginx.pid;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $dir/body;
  proxy_temp_path $dir/proxy;
  fastcgi_temp_path $dir/fastcgi;
  uwsgi_temp_path $dir/uwsgi;
  scgi_temp_path $dir/scgi;
  client_max_body_size 0;
  map_hash_bucket_size 128;
  # The team's token, in either header iret sends (IRET_STORE_TOKEN_HEADER).
  map "\$http_authorization:\$http_x_chroma_token" \$team_token_ok {
    default 0;
    "Bearer $token:" 1;
    ":$token" 1;
  }
  upstream chroma { server 127.0.0.1:$chroma; keepalive 16; }
  server {
    listen $port ssl;
    ssl_certificate $dir/server.pem;
    ssl_certificate_key $dir/server.key;
    ssl_protocols TLSv1.2 TLSv1.3;
    location / {
      if (\$team_token_ok = 0) {
        add_header WWW-Authenticate 'Bearer realm="team store", error="invalid_token"' always;
        return 401;
      }
      proxy_pass http://chroma;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Authorization "";
      proxy_set_header X-Chroma-Token "";
      proxy_read_timeout 300s;
    }
  }
}
EOF
echo "serving https://$host:$port -> chroma on 127.0.0.1:$chroma; CA $dir/ca.pem, token $dir/token" >&2
exec nginx -p "$dir" -e "$dir/error.log" -c "$dir/nginx.conf"
