{
  description = "lean-beam: immutable lean-beam runtimes and an MCP server for Lean 4 projects";

  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-unstable";

  outputs = { self, nixpkgs }:
    let
      lib = nixpkgs.lib;
      systems = [ "x86_64-linux" "aarch64-linux" "x86_64-darwin" "aarch64-darwin" ];
      forAllSystems = f: lib.genAttrs systems (system: f nixpkgs.legacyPackages.${system});

      pyproject = builtins.fromTOML (builtins.readFile ./pyproject.toml);
      versionLine = lib.findFirst (line: lib.hasPrefix "VERSION = " line) "VERSION = \"0\""
        (lib.splitString "\n" (builtins.readFile ./beam_runtime/version.py));
      version = builtins.elemAt (lib.splitString "\"" versionLine) 1;

      # pyproject.toml [project].dependencies as nixpkgs Python package names. The mapping from
      # PyPI names is explicit in tests/install/test_flake.py, which fails when the lists drift.
      runtimeDeps = ps: with ps; [ click packaging platformdirs filelock pydantic anyio lsprotocol psutil tomlkit ] ++ lib.optional (pythonOlder "3.11") tomli;
      # pyproject.toml [project.optional-dependencies].test, same rules.
      testDeps = ps: with ps; [ pytest pytest-timeout hypothesis mcp build ruff mypy ];

      package = pkgs: pkgs.python3Packages.buildPythonApplication {
        pname = pyproject.project.name;
        inherit version;
        pyproject = true;
        src = lib.cleanSource ./.;
        build-system = [ pkgs.python3Packages.setuptools ];
        dependencies = runtimeDeps pkgs.python3Packages;
        # The test suite builds its own wheel and venv; it runs in checks.default instead.
        doCheck = false;
        pythonImportsCheck = [ "beam_runtime" "beam_install" "beam_mcp" ];
        meta.mainProgram = "lean-beam";
      };

      testPython = pkgs: pkgs.python3.withPackages (ps:
        runtimeDeps ps ++ testDeps ps ++ [ ps.pip ps.setuptools ps.wheel ]);
    in
    {
      packages = forAllSystems (pkgs: { default = package pkgs; });

      # `nix run . -- install` runs `lean-beam install` from the built package.
      apps = forAllSystems (pkgs: {
        default = {
          type = "app";
          program = "${package pkgs}/bin/lean-beam";
        };
      });

      devShells = forAllSystems (pkgs: {
        default = pkgs.mkShell {
          packages = [ (testPython pkgs) pkgs.nix ];
        };
      });

      # The whole test suite, offline: BEAM_TEST_OFFLINE makes the test venv reuse this Python's
      # packages instead of downloading them.
      checks = forAllSystems (pkgs: {
        default = pkgs.runCommand "lean-beam-tests" { nativeBuildInputs = [ (testPython pkgs) ]; } ''
          cp -r ${lib.cleanSource ./.} source
          chmod -R u+w source
          cd source
          export HOME=$TMPDIR/home BEAM_TEST_OFFLINE=1
          mkdir -p $HOME
          python -m pytest -q -p no:cacheprovider tests
          touch $out
        '';
      });
    };
}
