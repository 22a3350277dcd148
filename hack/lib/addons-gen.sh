# Regenerates the wrapper Go modules of the cluster addons (hack/tools/kueue, hack/tools/volcano,
# hack/tools/scheduler-plugins) for the versions in hack/versions.env. Run it only when bumping a
# version (`hack/local-cluster.sh gen-addons [ADDON]...`); the committed go.mod/go.sum keep
# ordinary builds reproducible. Sourced by hack/lib/addons.sh.
#
# Volcano and scheduler-plugins pin every Kubernetes staging module with `replace` directives in
# their go.mod (a dependency's replaces are ignored, and k8s.io/kubernetes asks for the staging
# modules at v0.0.0), so their wrappers repeat those directives; Kueue needs none.
# shellcheck shell=bash

# Prints "FROM TO@VERSION" for every non-local replace directive of a go.mod, in both the block
# form and the one-line form.
addon_module_replaces() {  # addon_module_replaces GO_MOD_FILE
  awk '
    /^replace[[:space:]]*\($/ { block = 1; next }
    block && /^\)/ { block = 0; next }
    block || /^replace[[:space:]]/ {
      line = $0; sub(/^replace[[:space:]]+/, "", line); sub(/\/\/.*/, "", line)
      sub(/^[[:space:]]+/, "", line); sub(/[[:space:]]+$/, "", line)
      n = split(line, f, /[[:space:]]+/); arrow = 0
      for (i = 1; i <= n; i++) if (f[i] == "=>") arrow = i
      if (!arrow) next
      if (f[arrow + 1] ~ /^\./ || f[arrow + 2] == "") next
      print f[1], f[arrow + 1] "@" f[arrow + 2]
    }' "$1"
}

gen_addon_module() {  # gen_addon_module kueue|volcano|scheduler-plugins
  local name=$1 module version package dir=$HACK/tools/$1
  module=$(addon_module "$name"); version=$(addon_version "$name")
  rm -f "$dir/go.mod" "$dir/go.sum"
  mkdir -p "$dir"
  (cd "$dir" || exit
   export GOTOOLCHAIN=local GOFLAGS=''
   go mod init "mpi-controller/hack/tools/$name" >/dev/null 2>&1
   local gomod from to go_version
   gomod=$(go mod download -json "$module@v$version" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
   # The upstream build's GODEBUG defaults are those of its own go directive.
   go_version=$(sed -n 's/^go \([0-9]*\.[0-9]*\).*/\1/p' "$gomod")
   go mod edit -godebug="default=go$go_version"
   while read -r from to; do
     go mod edit -replace="$from=$to"
   done < <(addon_module_replaces "$gomod")
   if [[ $name == scheduler-plugins ]]; then
     # The module proxy refuses k8s.io/sample-apiserver v0.32.7 (403, "not available"). It is in
     # the module graph only because k8s.io/kubernetes requires every staging module; nothing
     # imports it, so a served 1.32 release of it does as well.
     go mod edit -replace=k8s.io/sample-apiserver=k8s.io/sample-apiserver@v0.32.3
   fi
   # One `go get` for all the packages: it records the go.sum entries of the packages it names.
   local packages=()
   for package in $(addon_packages "$name"); do packages+=("$package@v$version"); done
   go get "${packages[@]}")
}
