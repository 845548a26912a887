// Types for @echogarden/fvad-wasm (the package ships none): an Emscripten module factory.
declare module '@echogarden/fvad-wasm' {
  export interface FvadModule {
    _fvad_new(): number;
    _fvad_free(handle: number): void;
    _fvad_reset(handle: number): void;
    _fvad_set_mode(handle: number, mode: number): number;
    _fvad_set_sample_rate(handle: number, rate: number): number;
    _fvad_process(handle: number, ptr: number, samples: number): number;
    _malloc(bytes: number): number;
    _free(ptr: number): void;
    HEAP16: Int16Array;
  }
  const factory: (moduleArg?: object) => Promise<FvadModule>;
  export default factory;
}
