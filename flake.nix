{
  description = "lean-beam: immutable lean-beam runtimes and an MCP server for Lean 4 projects";

  # Pinned by flake.lock; `nix flake update` moves it.
  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-unstable";

  outputs =
    { self, nixpkgs }:
    let
      inherit (nixpkgs) lib;
      inherit (lib) fileset;
      systems = [
        "x86_64-linux"
        "aarch64-linux"
        "x86_64-darwin"
        "aarch64-darwin"
      ];

      pyproject = builtins.fromTOML (builtins.readFile ./pyproject.toml);
      versionLine = lib.findFirst (line: lib.hasPrefix "VERSION = " line) "VERSION = \"0\"" (
        lib.splitString "\n" (builtins.readFile ./beam_runtime/version.py)
      );
      version = builtins.elemAt (lib.splitString "\"" versionLine) 1;

      meta = {
        inherit (pyproject.project) description;
        license = lib.licenses.asl20;
        mainProgram = "lean-beam";
        platforms = systems;
      }
      // (if pyproject.project ? urls then { homepage = pyproject.project.urls.Homepage; } else { });

      # What the package is built from, and what the checks also need.
      packageFiles = fileset.unions [
        ./pyproject.toml
        ./README.md
        ./beam_install
        ./beam_runtime
        ./beam_mcp
      ];
      src = fileset.toSource {
        root = ./.;
        fileset = packageFiles;
      };
      testSrc = fileset.toSource {
        root = ./.;
        fileset = fileset.unions [
          packageFiles
          ./flake.nix
          ./flake.lock
          ./tests
        ];
      };

      # pyproject.toml [project].dependencies as python3Packages attributes. The PyPI -> nixpkgs
      # name map is written out in tests/install/test_flake.py, which evaluates this flake
      # against tests/nix/stub-nixpkgs.nix and fails when the lists drift. nixpkgs' plain
      # `lsprotocol` is 2023.0.1, without `lsprotocol.types.ClientInfo`: pyproject needs 2025.
      runtimeDeps =
        ps:
        with ps;
        [
          click
          packaging
          platformdirs
          filelock
          pydantic
          anyio
          lsprotocol_2025
          psutil
          tomlkit
        ]
        ++ lib.optional (pythonOlder "3.11") tomli;

      # The test extra needs mcp >= 2 (mcp.client.Client). nixpkgs' `mcp` stayed on 1.x into
      # 2026; then a 2.x `mcp_2` is used if the package set has one, and otherwise mcp is left
      # out, so tests/mcp/test_sdk_python.py skips instead of failing at collection.
      mcpForTests =
        ps:
        if lib.versionAtLeast ps.mcp.version "2" then
          [ ps.mcp ]
        else
          lib.optional (ps ? mcp_2 && lib.versionAtLeast ps.mcp_2.version "2") ps.mcp_2;
      # pyproject.toml [project.optional-dependencies].test, same rules.
      testDeps =
        ps:
        with ps;
        [
          pytest
          pytest-timeout
          pytest-xdist
          hypothesis
          build
          ruff
          mypy
          import-linter
          fusepy
        ]
        ++ mcpForTests ps;
      # `pip wheel --no-build-isolation` in the offline test venv needs the build backend.
      buildTools = ps: [
        ps.pip
        ps.setuptools
        ps.wheel
      ];

      perSystem =
        pkgs:
        let
          py = pkgs.python3Packages;
          lean-beam = py.buildPythonApplication {
            pname = pyproject.project.name;
            inherit version src meta;
            pyproject = true;
            build-system = [
              py.setuptools
              py.wheel
            ];
            dependencies = runtimeDeps py;
            # The test suite builds its own wheel and venv: it runs in checks.default instead.
            doCheck = false;
            pythonImportsCheck = [
              "beam_runtime"
              "beam_install"
              "beam_mcp"
            ];
          };
          # The check's Python: the package itself (its console scripts sit next to
          # sys.executable, where the tests look for them), its dependencies and the test extra.
          testPython = pkgs.python3.withPackages (
            ps: [ (ps.toPythonModule lean-beam) ] ++ runtimeDeps ps ++ testDeps ps ++ buildTools ps
          );
          program = command: {
            type = "app";
            program = "${lean-beam}/bin/${command}";
            meta = meta // {
              mainProgram = command;
            };
          };
        in
        {
          packages.default = lean-beam;

          # `nix run . -- install` runs `lean-beam install` from the built package.
          apps = {
            default = program "lean-beam";
            lean-beam-mcp = program "lean-beam-mcp";
            beam-cli = program "beam-cli";
          };

          checks = {
            package = lean-beam;
            # The whole test suite, offline and in the sandbox. BEAM_TEST_OFFLINE builds the
            # test wheel without isolation; the .pth the test venv gets (tests/support/venv.py)
            # lets it see this Python's packages. The fake Lean executables start with
            # `#!/usr/bin/env python3`, which the sandbox lacks. No Node here: CI is unset, so
            # the TypeScript SDK test skips.
            default =
              pkgs.runCommand "lean-beam-tests-${version}"
                {
                  nativeBuildInputs = [ testPython ];
                  inherit meta;
                }
                ''
                  cp -r ${testSrc} source
                  chmod -R u+w source
                  cd source
                  patchShebangs tests
                  unset CI
                  export HOME=$TMPDIR/home BEAM_TEST_OFFLINE=1
                  mkdir -p $HOME
                  python -m pytest -q -p no:cacheprovider tests
                  touch $out
                '';
          };

          # `nix develop`: the test dependencies, Node for the TypeScript SDK test, and an
          # editable install of this checkout in .venv-nix (deps come from the shell's PYTHONPATH).
          devShells.default = pkgs.mkShell {
            packages = [ pkgs.nodejs ];
            # buildInputs, as in the nixpkgs manual's venvShellHook example: the Python setup
            # hook puts these on PYTHONPATH.
            buildInputs = [
              pkgs.python3
              py.venvShellHook
            ]
            ++ runtimeDeps py
            ++ testDeps py
            ++ buildTools py;
            venvDir = "./.venv-nix";
            postVenvCreation = ''
              unset SOURCE_DATE_EPOCH
              pip install --quiet --no-deps --no-build-isolation --editable .
            '';
            postShellHook = ''
              unset SOURCE_DATE_EPOCH
            '';
          };

          formatter = pkgs.nixfmt-rfc-style;
        };

      # Evaluated once per system; every output below reuses the same derivations.
      bySystem = lib.genAttrs systems (system: perSystem nixpkgs.legacyPackages.${system});
      output = name: builtins.mapAttrs (_: outputs: outputs.${name}) bySystem;
    in
    {
      packages = output "packages";
      apps = output "apps";
      checks = output "checks";
      devShells = output "devShells";
      formatter = output "formatter";
    };
}
