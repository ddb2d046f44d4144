# The facts tests/install/test_flake.py checks, from the flake at `flakeDir` evaluated against
# tests/nix/stub-nixpkgs.nix. Run with `nix-instantiate --eval --strict --json`.
{
  flakeDir,
  system ? "x86_64-linux",
  python ? "3.13.7",
  mcp ? "2.1.1",
  mcp_2 ? null,
}:
let
  flake = import (/. + flakeDir + "/flake.nix");
  nixpkgs = import ./stub-nixpkgs.nix { inherit python mcp mcp_2; };
  outputs = flake.outputs {
    self = outputs;
    inherit nixpkgs;
  };
  package = outputs.packages.${system}.default;
  check = outputs.checks.${system}.default;
  shell = outputs.devShells.${system}.default;
  describe = drv: {
    attr = drv.stubAttr or null;
    name = drv.name;
    version = drv.version or null;
    module = drv.stubPythonModule or false;
    isPackage = (drv.outPath or "") == package.outPath;
  };
in
{
  description = flake.description;
  nixpkgsUrl = flake.inputs.nixpkgs.url;
  systems = builtins.attrNames outputs.packages;
  package = {
    inherit (package)
      name
      pname
      version
      pyproject
      doCheck
      pythonImportsCheck
      stubKind
      ;
    # (an attribute set with `outPath` would be printed as that string)
    storePath = package.outPath;
    buildSystem = map describe package.build-system;
    dependencies = map describe package.dependencies;
    src = package.src.stubFiles;
    meta = package.meta // {
      license = package.meta.license.spdxId;
    };
  };
  apps = builtins.mapAttrs (_: app: {
    inherit (app) type program;
    mainProgram = app.meta.mainProgram;
  }) outputs.apps.${system};
  checks = {
    names = builtins.attrNames outputs.checks.${system};
    packageIsPackage = outputs.checks.${system}.package.outPath == package.outPath;
    script = check.buildCommand;
    python = map describe (builtins.head check.nativeBuildInputs).stubPackages;
  };
  devShell = {
    packages = map describe (shell.packages ++ shell.buildInputs);
    inherit (shell) venvDir postVenvCreation;
  };
  formatter = outputs.formatter.${system}.stubAttr;
}
