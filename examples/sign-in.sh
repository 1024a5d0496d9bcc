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
sign_in() {
  local base=http://localhost:8080 jar next request csrf field code
  jar=$(mktemp)
  next=$(curl -s -c "$jar" -b "$jar" -o /dev/null -w '%{redirect_url}' \
    "$base/oauth/v2/authorize?client_id=web&response_type=code&state=script&redirect_uri=http://localhost:3000/callback&scope=${3// /%20}")
  request=${next##*authRequestID=}
  for field in "loginName=$1" "password=$2" ${4:+"code=$4"}; do
    csrf=$(curl -s -c "$jar" -b "$jar" "$next" | grep -o 'name="csrfToken" value="[^"]*"' | head -n 1 | cut -d '"' -f 4)
    next=$(curl -s -c "$jar" -b "$jar" -o /dev/null -w '%{redirect_url}' "${next%%\?*}" \
      -d "authRequestID=$request" -d "csrfToken=$csrf" --data-urlencode "$field")
  done
  code=$(curl -s -c "$jar" -b "$jar" -o /dev/null -w '%{redirect_url}' "$next" | grep -o 'code=[^&]*' | cut -d = -f 2)
  rm -f "$jar"
  curl -s -u web:web-secret "$base/oauth/v2/token" \
    -d grant_type=authorization_code -d "code=$code" -d redirect_uri=http://localhost:3000/callback
}
