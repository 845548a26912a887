/** Values shared by the scenario files. */
export const EMPTY = '00000000-0000-0000-0000-000000000000';
export const tel = (target: string) => ({ type: 'tel', target, target_name: '', name: '', detail: '' });
export const ANSWER = [{ type: 'answer' }];
