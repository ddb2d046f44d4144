# A stand-in for the nixpkgs flake input, small enough to evaluate without fetching nixpkgs.
#
# It has the attributes flake.nix uses, under nixpkgs' own names: the few `lib` functions
# (same semantics as nixpkgs' for the arguments the flake passes), `legacyPackages.<system>`
# with python3, python3Packages, runCommand, mkShell, nodejs and nixfmt-rfc-style. Derivations
# are plain attribute sets with a fake store path; nothing is built or copied to the store.
# Every Python package records the attribute it was taken from (`stubAttr`) so the test can
# compare the flake's choices with pyproject.toml.
#
# Versions: lsprotocol (= lsprotocol_2023, 2023.0.1) and lsprotocol_2025 (2025.0.0) are nixpkgs'
# own; mcp is 1.29.0 in nixpkgs in August 2026 and mcp/2.nix carries 2.2.0 (the arguments let a
# test pick either). The other versions are stand-ins at least as new as nixpkgs carried in
# 2025-2026, not read from the pinned revision.
{
  python ? "3.13.7",
  mcp ? "2.1.1",
  mcp_2 ? null,
}:
let
  fakeStorePath = name: "/nix/store/00000000000000000000000000000000-${name}";

  lib = rec {
    genAttrs =
      names: f:
      builtins.listToAttrs (
        map (name: {
          inherit name;
          value = f name;
        }) names
      );
    findFirst =
      pred: default: list:
      let
        found = builtins.filter pred list;
      in
      if found == [ ] then default else builtins.head found;
    hasPrefix = prefix: str: builtins.substring 0 (builtins.stringLength prefix) str == prefix;
    # nixpkgs escapes the separator; the flake only splits on "\n" and "\"", which need none.
    splitString = sep: str: builtins.filter builtins.isString (builtins.split sep str);
    optional = cond: x: if cond then [ x ] else [ ];
    versionAtLeast = v1: v2: builtins.compareVersions v1 v2 >= 0;
    versionOlder = v1: v2: builtins.compareVersions v2 v1 == 1;
    licenses.asl20 = {
      spdxId = "Apache-2.0";
      shortName = "asl20";
    };
    fileset = {
      # A file set here is the list of paths it was made of; like nixpkgs, a missing path is an
      # evaluation error.
      unions = sets: {
        stubPaths = builtins.concatMap (
          set: if builtins.isPath set then checkedPath set else set.stubPaths
        ) sets;
      };
      toSource =
        { root, fileset }:
        let
          rootString = toString root;
          paths = if builtins.isPath fileset then checkedPath fileset else fileset.stubPaths;
          relative =
            path:
            let
              full = toString path;
            in
            if hasPrefix (rootString + "/") full then
              builtins.substring (builtins.stringLength rootString + 1) (-1) full
            else
              throw "lib.fileset.toSource: ${full} is not under the root ${rootString}";
        in
        {
          outPath = builtins.deepSeq paths (fakeStorePath "source");
          stubFiles = map relative paths;
        };
    };
    checkedPath =
      path:
      if builtins.pathExists path then
        [ path ]
      else
        throw "lib.fileset: ${toString path} does not exist";
  };

  derivation' =
    attrs:
    attrs
    // {
      type = "derivation";
      outPath = fakeStorePath attrs.name;
    };

  pythonPackage =
    attr: pname: version:
    derivation' {
      name = "python${pythonMajorMinor}-${pname}-${version}";
      inherit pname version;
      stubAttr = attr;
    };

  pythonMajorMinor = builtins.concatStringsSep "." (
    builtins.genList (builtins.elemAt (builtins.filter builtins.isString (builtins.split "\\." python))) 2
  );

  python3Packages = rec {
    click = pythonPackage "click" "click" "8.2.1";
    packaging = pythonPackage "packaging" "packaging" "25.0";
    platformdirs = pythonPackage "platformdirs" "platformdirs" "4.3.8";
    filelock = pythonPackage "filelock" "filelock" "3.18.0";
    pydantic = pythonPackage "pydantic" "pydantic" "2.11.7";
    anyio = pythonPackage "anyio" "anyio" "4.9.0";
    lsprotocol_2023 = pythonPackage "lsprotocol_2023" "lsprotocol" "2023.0.1";
    lsprotocol_2025 = pythonPackage "lsprotocol_2025" "lsprotocol" "2025.0.0";
    lsprotocol = lsprotocol_2023;
    psutil = pythonPackage "psutil" "psutil" "7.0.0";
    tomlkit = pythonPackage "tomlkit" "tomlkit" "0.13.3";
    tomli = pythonPackage "tomli" "tomli" "2.2.1";
    pytest = pythonPackage "pytest" "pytest" "8.4.1";
    pytest-timeout = pythonPackage "pytest-timeout" "pytest-timeout" "2.4.0";
    pytest-xdist = pythonPackage "pytest-xdist" "pytest-xdist" "3.7.0";
    hypothesis = pythonPackage "hypothesis" "hypothesis" "6.136.9";
    build = pythonPackage "build" "build" "1.2.2";
    ruff = pythonPackage "ruff" "ruff" "0.12.7";
    mypy = pythonPackage "mypy" "mypy" "1.17.1";
    import-linter = pythonPackage "import-linter" "import-linter" "2.3";
    fusepy = pythonPackage "fusepy" "fusepy" "3.0.1";
    pip = pythonPackage "pip" "pip" "25.0.1";
    setuptools = pythonPackage "setuptools" "setuptools" "80.9.0";
    wheel = pythonPackage "wheel" "wheel" "0.46.1";
    venvShellHook = derivation' {
      name = "venv-shell-hook";
      stubAttr = "venvShellHook";
    };

    pythonOlder = version: builtins.compareVersions python version < 0;
    buildPythonApplication =
      args:
      derivation' (
        args
        // {
          name = "${args.pname}-${args.version}";
          stubKind = "buildPythonApplication";
        }
      );
    toPythonModule = drv: drv // { stubPythonModule = true; };
  }
  // {
    mcp = pythonPackage "mcp" "mcp" mcp;
  }
  // (if mcp_2 == null then { } else { mcp_2 = pythonPackage "mcp_2" "mcp" mcp_2; });

  packages = {
    inherit python3Packages;
    python3 = {
      name = "python3-${python}";
      version = python;
      pkgs = python3Packages;
      stubAttr = "python3";
      withPackages =
        f:
        derivation' {
          name = "python${python}-env";
          stubPackages = f python3Packages;
        };
    };
    runCommand =
      name: env: buildCommand:
      derivation' (env // { inherit name buildCommand; });
    mkShell = args: derivation' (args // { name = "nix-shell"; });
    nodejs = derivation' {
      name = "nodejs-22.18.0";
      stubAttr = "nodejs";
    };
    nixfmt-rfc-style = derivation' {
      name = "nixfmt-1.0.1";
      stubAttr = "nixfmt-rfc-style";
    };
  };
in
{
  inherit lib;
  legacyPackages = lib.genAttrs [
    "x86_64-linux"
    "aarch64-linux"
    "x86_64-darwin"
    "aarch64-darwin"
  ] (system: packages);
}
