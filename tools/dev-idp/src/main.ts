import { runService } from '@platform/shared';
import { compose } from './compose';
import { configSchema } from './config';

runService({ name: 'dev-idp', configSchema, compose });
