# sign_in: a browser sign-in without a browser, for scripts and for trying the API with a user's
# token (docs/getting-started.md). Source it in bash, then:
#
#   sign_in LOGIN_NAME PASSWORD SCOPE [ONE_TIME_CODE]
#
# It runs the authorization code flow of the example instance's `web` application
# (examples/bootstrap.yaml) against http://localhost:8080 with curl and a cookie jar: the
# authorization request, the login name, the password (and the authenticator app's code, when the
# user has one), the callback, then the code at the token endpoint. It prints the token response.
# Each login page answers its form with a redirect to the next step, and the CSRF token of each form
# is bound to the browser cookie, which the jar keeps.
#
#   sign_in_with_idp IDP_ID LOGIN_NAME PASSWORD SCOPE
#
# The same through the button "Continue with …" of an identity provider that is itself a Gatehouse
# (docs/federation.md): the button, the sign-in at the provider, the way back through Gatehouse's
# callback and its page "Signing you in" (which moves on with a Refresh header), then the code at
# the token endpoint.
#
#   sign_in_at AUTHORIZATION_URL LOGIN_NAME PASSWORD [ONE_TIME_CODE]
#
# The browser's part alone, at the login of any Gatehouse: it opens an authorization URL (of any
# client, such as the one an identity provider intent answers), signs in, and prints where the
# login sends the browser then: the client's redirect URI with `code` and `state`.
sign_in_at() {
  local jar next request csrf field
  jar=$(mktemp)
  next=$(curl -s -c "$jar" -b "$jar" -o /dev/null -w '%{redirect_url}' "$1")
  request=${next##*authRequestID=}
  for field in "loginName=$2" "password=$3" ${4:+"code=$4"}; do
    csrf=$(curl -s -c "$jar" -b "$jar" "$next" | grep -o 'name="csrfToken" value="[^"]*"' | head -n 1 | cut -d '"' -f 4)
    next=$(curl -s -c "$jar" -b "$jar" -o /dev/null -w '%{redirect_url}' "${next%%\?*}" \
      -d "authRequestID=$request" -d "csrfToken=$csrf" --data-urlencode "$field")
  done
  curl -s -c "$jar" -b "$jar" -o /dev/null -w '%{redirect_url}\n' "$next"
  rm -f "$jar"
}

# The authorization request of the `web` application with the scope $1.
web_authorize_url() {
  echo "http://localhost:8080/oauth/v2/authorize?client_id=web&response_type=code&state=script&redirect_uri=http://localhost:3000/callback&scope=${1// /%20}"
}

# The code of a redirect to `web` (read from stdin) at the token endpoint; prints the token response.
web_token() {
  local code
  code=$(grep -o 'code=[^&]*' | cut -d = -f 2)
  curl -s -u web:web-secret http://localhost:8080/oauth/v2/token \
    -d grant_type=authorization_code -d "code=$code" -d redirect_uri=http://localhost:3000/callback
}

sign_in() {
  sign_in_at "$(web_authorize_url "$3")" "$1" "$2" ${4:+"$4"} | web_token
}

sign_in_with_idp() {
  local jar next request csrf
  jar=$(mktemp)
  next=$(curl -s -c "$jar" -b "$jar" -o /dev/null -w '%{redirect_url}' "$(web_authorize_url "$4")")
  request=${next##*authRequestID=}
  csrf=$(curl -s -c "$jar" -b "$jar" "$next" | grep -o 'name="csrfToken" value="[^"]*"' | head -n 1 | cut -d '"' -f 4)
  next=$(curl -s -c "$jar" -b "$jar" -o /dev/null -w '%{redirect_url}' "http://localhost:8080/ui/login/idp?authRequestID=$request" \
    -d "authRequestID=$request" -d "csrfToken=$csrf" -d "idpId=$1")
  next=$(curl -s -c "$jar" -b "$jar" -o /dev/null -w '%{redirect_url}' "$(sign_in_at "$next" "$2" "$3")")
  next=$(curl -s -c "$jar" -b "$jar" -o /dev/null -D - "$next" | grep -i '^refresh:' | sed 's/.*url=//' | tr -d '\r')
  curl -s -c "$jar" -b "$jar" -o /dev/null -w '%{redirect_url}' "$next" | web_token
  rm -f "$jar"
}
